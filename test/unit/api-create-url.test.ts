import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { machineSchema } from '../../src/config/schema.js';
import { decodeList } from '../../src/db/json-columns.js';
import { form, startTestServer, type TestServer } from '../helpers/server.js';

describe('POST /tasks/create/url', () => {
  let server: TestServer;
  before(async () => {
    server = await startTestServer({ machines: [machineSchema.parse({ name: 'linux1', platform: 'linux', tags: ['x64'] })] });
  });
  after(() => server.close());

  const post = (body: RequestInit['body'], path = '/tasks/create/url', headers: Record<string, string> = {}) =>
    server.json(path, { method: 'POST', body, headers });
  const taskOf = async (id: number) => (await server.ctx.stores.tasks.get(id))!;

  it('creates a url task from a multipart form, and from an urlencoded one, also under /v1', async () => {
    for (const [body, path] of [
      [form({ url: 'http://example.com/a' }), '/tasks/create/url'],
      [new URLSearchParams({ url: 'http://example.com/a' }), '/tasks/create/url'],
      [new URLSearchParams({ url: 'http://example.com/a' }), '/v1/tasks/create/url'],
    ] as const) {
      const { status, body: answer } = await post(body, path);
      assert.equal(status, 200);
      assert.deepEqual(Object.keys(answer), ['task_id']);
      const task = await taskOf(answer.task_id);
      assert.equal(task.category, 'url');
      assert.equal(task.target, 'http://example.com/a');
      assert.equal(task.sample_id, null);
      assert.equal(task.package, '');
      assert.equal(task.status, 'pending');
    }
  });

  it('stores every field, and the API shows them as Cuckoo does', async () => {
    const { status, body } = await post(new URLSearchParams({
      url: 'https://1.2.3.4:9001/wow?q=1',
      package: 'firefox',
      timeout: '30',
      priority: '2',
      options: 'route=drop,x=1',
      machine: 'linux1',
      platform: 'linux',
      tags: 'x64',
      custom: 'c',
      owner: 'alice',
      clock: '12-31-2020 23:59:58',
      memory: 'on',
      enforce_timeout: '1',
    }));
    assert.equal(status, 200);
    const view = await server.json(`/tasks/view/${body.task_id}`);
    const task = view.body.task;
    assert.equal(task.target, 'https://1.2.3.4:9001/wow?q=1');
    assert.equal(task.package, 'firefox');
    assert.equal(task.timeout, 30);
    assert.equal(task.priority, 2);
    assert.deepEqual(task.options, { route: 'drop', x: '1' });
    assert.equal((await taskOf(body.task_id)).options, 'route=drop,x=1');
    assert.equal(task.machine, 'linux1');
    assert.equal(task.platform, 'linux');
    assert.deepEqual(task.tags, ['x64']);
    assert.equal(task.custom, 'c');
    assert.equal(task.owner, 'alice');
    assert.equal((await taskOf(body.task_id)).clock, '2020-12-31T23:59:58.000Z');
    assert.equal(task.memory, true);
    assert.equal(task.enforce_timeout, true);
    assert.deepEqual(task.sample, {});
  });

  it('parses booleans like the other endpoints: memory=0 and memory=false are false (Cuckoo says true)', async () => {
    for (const [value, expected] of [['0', 0], ['false', 0], ['no', 0], ['None', 0], ['yes', 1], ['TRUE', 1], ['', 0]] as const) {
      const { status, body } = await post(new URLSearchParams({ url: 'http://example.com/', memory: value, enforce_timeout: value }));
      assert.equal(status, 200);
      const task = await taskOf(body.task_id);
      assert.equal(task.memory, expected, `memory=${value}`);
      assert.equal(task.enforce_timeout, expected, `enforce_timeout=${value}`);
    }
    const bad = await post(new URLSearchParams({ url: 'http://example.com/', memory: 'perhaps' }));
    assert.equal(bad.status, 400);
    assert.match(bad.body.message, /^memory must be a boolean/);
  });

  it('accepts http and https URLs with a domain, localhost or an IP address', async () => {
    for (const url of ['http://example.com', 'HTTPS://Example.COM/path', 'http://localhost:8080/x', 'http://[::1]/', 'http://10.0.0.1', 'http://xn--bcher-kva.example/', 'http://bücher.example/']) {
      const { status, body } = await post(new URLSearchParams({ url }));
      assert.equal(status, 200, url);
      assert.equal((await taskOf(body.task_id)).target, url);
    }
    const padded = await post(new URLSearchParams({ url: '  http://example.com/padded \n' }));
    assert.equal((await taskOf(padded.body.task_id)).target, 'http://example.com/padded');
    const domain = await post(new URLSearchParams({ url: 'evil.example' }));
    assert.equal((await taskOf(domain.body.task_id)).target, 'http://evil.example', 'a bare domain is opened over http');
  });

  it('answers 400 for a missing or unusable url, creating nothing', async () => {
    const before = (await server.ctx.stores.tasks.list()).length;
    const missing = await post(new URLSearchParams({ package: 'ie' }));
    assert.equal(missing.status, 400);
    assert.deepEqual(missing.body, { message: 'No url has been given' });
    const empty = await post(form({ url: '' }));
    assert.equal(empty.status, 400);
    assert.deepEqual(empty.body, { message: 'No url has been given' });
    for (const url of ['not a url', 'intranet', 'example.com:notaport', 'ftp://example.com/file', 'http://', 'javascript:alert(1)', 'file:///etc/passwd', 'http://exa mple.com/', 'http://intranet/', 'http://a..b.com/', 'http://0000000123/', 'http://0x7f.1/', 'someone@evil.example']) {
      const { status, body } = await post(new URLSearchParams({ url }));
      assert.equal(status, 400, url);
      assert.equal(body.message, `url must be an absolute http:// or https:// URL or a domain name; got ${JSON.stringify(url)}`);
    }
    const noBody = await server.json('/tasks/create/url', { method: 'POST' });
    assert.equal(noBody.status, 400);
    assert.deepEqual(noBody.body, { message: 'No url has been given' });
    assert.equal((await server.ctx.stores.tasks.list()).length, before);
  });

  it('answers 400 for a JSON body, which Cuckoo ignores', async () => {
    const { status, body } = await post(JSON.stringify({ url: 'http://example.com' }), '/tasks/create/url', { 'content-type': 'application/json' });
    assert.equal(status, 400);
    assert.match(body.message, /multipart\/form-data or application\/x-www-form-urlencoded/);
  });

  it('checks every other field the way create/file does', async () => {
    const cases: Array<[Record<string, string>, RegExp]> = [
      [{ priority: '9' }, /^priority must be an integer from 1 to 3/],
      [{ timeout: 'soon' }, /^timeout must be an integer/],
      [{ clock: '13-01-2019 00:00:00' }, /^clock must be a time/],
      [{ owner: 'x'.repeat(65) }, /^owner must be at most 64 characters/],
      [{ machine: 'win7' }, /^Unknown machine "win7"/],
      [{ platform: 'darwin' }, /^No configured machine has platform "darwin"/],
      [{ tags: 'arm' }, /^No configured machine has all of the tags "arm"/],
    ];
    for (const [fields, message] of cases) {
      const { status, body } = await post(new URLSearchParams({ url: 'http://example.com/', ...fields }));
      assert.equal(status, 400, JSON.stringify(fields));
      assert.match(body.message, message);
    }
  });

  it('uses the first value of a repeated field and ignores file parts', async () => {
    const data = form({ url: 'http://first.example/', tags: 'x64' }, [['file', 'ignored.bin', 'data']]);
    data.append('url', 'http://second.example/');
    const { status, body } = await post(data);
    assert.equal(status, 200);
    const task = await taskOf(body.task_id);
    assert.equal(task.target, 'http://first.example/');
    assert.deepEqual(decodeList(task.tags), ['x64']);
  });
});

describe('POST /tasks/create/url with authentication and a memory_dump default', () => {
  let server: TestServer;
  before(async () => {
    server = await startTestServer({ api: { token: 'tok' }, tasks: { memory_dump: true } });
  });
  after(() => server.close());

  it('needs the bearer token, and takes memory from tasks.memory_dump when the form does not say', async () => {
    const denied = await fetch(`${server.url}/tasks/create/url`, { method: 'POST', body: new URLSearchParams({ url: 'http://example.com' }) });
    assert.equal(denied.status, 401);
    const wrong = await fetch(`${server.url}/tasks/create/url`, {
      method: 'POST',
      body: new URLSearchParams({ url: 'http://example.com' }),
      headers: { authorization: 'Bearer nope' },
    });
    assert.equal(wrong.status, 401);
    assert.deepEqual(await server.ctx.stores.tasks.list(), []);
    const { status, body } = await server.json('/tasks/create/url', { method: 'POST', body: new URLSearchParams({ url: 'http://example.com' }) });
    assert.equal(status, 200);
    assert.equal((await server.ctx.stores.tasks.get(body.task_id))!.memory, 1);
    const explicit = await server.json('/tasks/create/url', { method: 'POST', body: new URLSearchParams({ url: 'http://example.com', memory: 'no' }) });
    assert.equal((await server.ctx.stores.tasks.get(explicit.body.task_id))!.memory, 0);
  });
});
