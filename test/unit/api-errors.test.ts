import assert from 'node:assert/strict';
import { mkdirSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { NewTask } from '../../src/db/schema.js';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { taskRow } from '../helpers/tasks.js';

const SECRET = 'SECRET-OUTSIDE-THE-FOLDER';

/** node:http sends the path as written; fetch would resolve `..` segments before they reach the server. */
function rawGet(server: TestServer, path: string): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const request = http.request({ host: '127.0.0.1', port: new URL(server.url).port, path, agent: false }, (response) => {
      let body = '';
      response.setEncoding('utf8').on('data', (chunk: string) => (body += chunk));
      response.on('end', () => resolve({ status: response.statusCode ?? 0, body }));
    });
    request.on('error', reject).end();
  });
}

function taskFields(overrides: Partial<NewTask>): NewTask {
  return taskRow({ status: 'reported', ...overrides });
}

describe('documented errors', () => {
  let server: TestServer;
  let running: number;
  let urlTask: number;
  before(async () => {
    server = await startTestServer();
    running = await server.ctx.stores.tasks.insert(taskFields({ status: 'running' }));
    urlTask = await server.ctx.stores.tasks.insert(taskFields({ category: 'url', target: 'http://example.test/' }));
    server.ctx.layout.analysis(urlTask).create();
    writeFileSync(server.ctx.layout.analysis(urlTask).reportJson, '{"info": {"id": 2}}');
  });
  after(() => server.close());

  it('answers each as JSON {"message": ...} with the documented status', async () => {
    const cases: Array<[string, number, string]> = [
      ['/tasks/view/999', 404, 'Task not found'],
      ['/tasks/reschedule/999', 404, 'There is no analysis with the specified ID'],
      [`/tasks/reschedule/${urlTask}/9`, 400, 'Priority must be between 1 and 3'],
      ['/tasks/delete/999', 404, 'Task not found'],
      [`/tasks/delete/${running}`, 500, 'The task is currently being processed, cannot delete'],
      ['/tasks/report/999', 404, 'Report not found'],
      ['/tasks/report/999/all', 404, 'Report not found'],
      [`/tasks/report/${urlTask}/pdf`, 400, 'Invalid report format'],
      [`/tasks/report/${urlTask}?elements=target`, 404, "'target' not found"],
      [`/tasks/report/${urlTask}/html?elements=info`, 404, 'Get specific field is not available in HTML format, try again with JSON format'],
      ['/tasks/summary/999', 404, 'Report not found'],
      ['/tasks/screenshots/999', 404, 'Task not found'],
      ['/tasks/screenshots/999/0001', 404, 'Task not found'],
      [`/tasks/screenshots/${urlTask}/0001`, 404, 'Screenshot not found!'],
      ['/tasks/rereport/999', 404, 'Task not found'],
      ['/tasks/reboot/999', 404, 'Error creating reboot task'],
      [`/tasks/reboot/${urlTask}`, 404, 'Error creating reboot task'],
      ['/memory/list/999', 404, 'Memory dump not found'],
      ['/memory/get/999/1-1', 404, 'Memory dump not found'],
      ['/pcap/get/999', 404, 'File not found'],
      ['/files/view/md5/abc', 400, 'Invalid lookup term'],
      ['/files/view/id/0', 400, 'Invalid lookup term'],
      [`/files/view/sha256/${'0'.repeat(64)}`, 404, 'File not found'],
      [`/files/get/${'0'.repeat(64)}`, 404, 'File not found'],
      ['/files/get/abc', 400, 'Invalid lookup term'],
      ['/machines/view/nope', 404, 'Machine not found'],
      ['/tasks/list?completed_after=yesterday', 400, 'completed_after must be a UNIX timestamp in whole seconds'],
      ['/vpn/status', 500, 'No VPN is configured'],
      ['/exit', 403, 'This call can only be used in debug mode'],
    ];
    for (const [path, status, message] of cases) {
      const response = await server.fetch(path);
      assert.equal(response.status, status, path);
      assert.equal(await response.text(), `{\n  "message": ${JSON.stringify(message)}\n}\n`, path);
    }
  });

  it('has no /v1 alias for summary, rereport, reboot, memory, vpn and exit', async () => {
    for (const path of ['/v1/tasks/summary/1', '/v1/tasks/rereport/1', '/v1/tasks/reboot/1', '/v1/memory/list/1', '/v1/memory/get/1/1-1', '/v1/vpn/status', '/v1/exit']) {
      const { status, body } = await server.json(path);
      assert.equal(status, 404, path);
      assert.match(body.message, /^No such route/);
    }
  });

  it('does not match non-digit ids, signs or trailing slashes', async () => {
    for (const path of ['/tasks/view/abc', '/tasks/view/-1', '/tasks/view/+1', '/tasks/view/1.0', '/tasks/view/1/', '/tasks/delete/1x', '/files/view/id/-1', '/memory/list/x']) {
      const { status, body } = await server.json(path);
      assert.equal(status, 404, path);
      assert.match(body.message, /^No such route/, path);
    }
  });
});

describe('file names in paths never leave their folder', () => {
  let server: TestServer;
  before(async () => {
    server = await startTestServer();
    const paths = server.ctx.layout.analysis(1);
    paths.create();
    // Files a traversal bug would serve: beside shots/ and memory/, and at the top of storage.
    writeFileSync(join(paths.dir, 'secret.jpg'), SECRET);
    writeFileSync(join(paths.dir, 'secret.dmp'), SECRET);
    writeFileSync(join(paths.reports, 'secret.dmp'), SECRET);
    writeFileSync(join(server.ctx.layout.root, 'secret.dmp'), SECRET);
    writeFileSync(join(paths.shots, '0001.jpg'), 'JPEG');
    writeFileSync(join(paths.memory, '1-1.dmp'), 'DUMP');
    mkdirSync(join(paths.shots, 'sub'));
    writeFileSync(join(paths.shots, 'sub', 'x.jpg'), SECRET);
  });
  after(() => server.close());

  const attempts = [
    '/memory/get/1/..',
    '/memory/get/1/.',
    '/memory/get/1/..%2Fsecret',
    '/memory/get/1/..%2freports%2fsecret',
    '/memory/get/1/%2e%2e%2fsecret',
    '/memory/get/1/%2E%2E%2F%2E%2E%2F..%2Fsecret',
    '/memory/get/1/..%5csecret',
    '/memory/get/1/secret%00',
    '/memory/get/1/%00',
    '/memory/get/1/%2fetc%2fpasswd',
    '/memory/get/1/../secret',
    '/memory/get/1/%252e%252e%252fsecret',
    '/tasks/screenshots/1/..',
    '/tasks/screenshots/1/..%2Fsecret',
    '/tasks/screenshots/1/sub%2Fx',
    '/tasks/screenshots/1/%2e%2e%2fsecret',
    '/tasks/screenshots/1/0001%00',
    '/tasks/screenshots/1/..%5csecret',
    '/files/get/..',
    '/files/get/..%2F..%2Fsecret.dmp',
    `/files/get/..%2F${'a'.repeat(58)}`,
    `/files/get/${'a'.repeat(63)}%00`,
    '/files/view/md5/..%2F..%2F..%2F..%2F..%2F..%2Fx',
    '/tasks/report/1/..',
    '/tasks/report/1/..%2F..%2Fsecret.dmp',
    '/tasks/report/1/json%00',
    '/machines/view/..',
    '/machines/view/..%2F..',
  ];

  it('answers 400 or 404 as JSON, never a file from elsewhere', async () => {
    for (const path of attempts) {
      const { status, body } = await rawGet(server, path);
      assert.ok(status === 400 || status === 404, `${path} -> ${status}`);
      assert.ok(!body.includes(SECRET), path);
      assert.equal(typeof JSON.parse(body).message, 'string', path);
    }
  });

  it('refuses names with separators, NUL or dot segments with 400', async () => {
    for (const path of ['/memory/get/1/..', '/memory/get/1/..%2Fsecret', '/memory/get/1/secret%00', '/memory/get/1/..%5csecret', '/tasks/screenshots/1/..', '/tasks/screenshots/1/sub%2Fx']) {
      const { status, body } = await rawGet(server, path);
      assert.equal(status, 400, path);
      assert.match(JSON.parse(body).message, /^Invalid (memory dump|screenshot) name$/);
    }
  });

  it('still serves the legitimate files', async () => {
    assert.deepEqual(await rawGet(server, '/memory/get/1/1-1'), { status: 200, body: 'DUMP' });
    assert.deepEqual(await rawGet(server, '/tasks/screenshots/1/0001'), { status: 200, body: 'JPEG' });
  });
});

describe('GET /vpn/status', () => {
  let server: TestServer;
  before(async () => {
    server = await startTestServer({
      routing: {
        vpns: [
          { name: 'vpn0', description: 'loopback stands in for a tunnel that is up', interface: 'lo' },
          { name: 'vpn1', description: 'no such interface', interface: 'nbxnone0' },
          { name: 'odd', description: 'not an interface name', interface: '../lo' },
        ],
      },
    });
  });
  after(() => server.close());

  it('answers whether each configured VPN interface exists and is up', async () => {
    const { status, body } = await server.json('/vpn/status');
    assert.equal(status, 200);
    assert.deepEqual(body, { vpns: { odd: false, vpn0: true, vpn1: false } });
  });
});

describe('GET /exit', () => {
  it('in debug mode answers "Server stopped", then calls onExit once the answer is sent; HEAD stops nothing', async () => {
    const calls: string[] = [];
    const server = await startTestServer({ api: { debug: true } }, { onExit: () => calls.push('exit') });
    try {
      const head = await server.fetch('/exit', { method: 'HEAD' });
      assert.equal(head.status, 200);
      assert.deepEqual(calls, []);
      const response = await server.fetch('/exit');
      assert.equal(response.status, 200);
      // The whole answer arrives although onExit has run: it is called only once the answer is out.
      assert.deepEqual(await response.json(), { message: 'Server stopped' });
      for (let i = 0; i < 50 && calls.length === 0; i++) await new Promise((resolve) => setTimeout(resolve, 10));
      assert.deepEqual(calls, ['exit']);
    } finally {
      await server.close();
    }
  });

  it('in debug mode without a way to stop answers 500', async () => {
    const server = await startTestServer({ api: { debug: true } });
    try {
      const { status, body } = await server.json('/exit');
      assert.equal(status, 500);
      assert.deepEqual(body, { message: 'This server cannot be stopped through the API' });
    } finally {
      await server.close();
    }
  });
});
