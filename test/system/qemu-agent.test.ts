import assert from 'node:assert/strict';
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { after, before, describe, it } from 'node:test';
import yazl from 'yazl';
import { AgentClient } from '../../src/machinery/qemu/agent-client.js';
import { guestFile } from '../../src/machinery/qemu/guest-files.js';

/**
 * The guest agent speaks Cuckoo 2.0's agent protocol. It is plain Python 3, so it runs here on the host,
 * on a loopback port, and the host's agent client drives it exactly as it drives it inside a guest.
 */
let agent: ChildProcess;
let client: AgentClient;
let baseUrl: string;
let scratch: string;

async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise((resolve) => server.close(resolve));
  return port;
}

async function post(path: string, fields: Record<string, string>): Promise<{ status: number; body: Record<string, unknown> }> {
  const form = new FormData();
  for (const [name, value] of Object.entries(fields)) form.append(name, value);
  const response = await fetch(`${baseUrl}${path}`, { method: 'POST', body: form });
  return { status: response.status, body: (await response.json()) as Record<string, unknown> };
}

async function zipOf(files: Record<string, string>): Promise<Buffer> {
  const zip = new yazl.ZipFile();
  for (const [name, content] of Object.entries(files)) zip.addBuffer(Buffer.from(content), name);
  zip.end();
  const chunks: Buffer[] = [];
  for await (const chunk of zip.outputStream) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}

describe('guest agent (Cuckoo 2.0 agent protocol)', () => {
  before(async () => {
    scratch = mkdtempSync(join(tmpdir(), 'nestbox-agent-'));
    const port = await freePort();
    agent = spawn('/usr/bin/python3', ['-B', guestFile('agent/agent.py'), '127.0.0.1', String(port)], { stdio: 'ignore' });
    baseUrl = `http://127.0.0.1:${port}`;
    client = new AgentClient(baseUrl, 10_000);
    await client.waitUntilReady(10_000);
  });

  after(() => {
    agent.kill('SIGKILL');
    rmSync(scratch, { recursive: true, force: true });
  });

  it('greets with Cuckoo agent 0.9 and its features', async () => {
    const hello = await client.hello();
    assert.equal(hello.message, 'Cuckoo Agent!');
    assert.equal(hello.version, '0.9');
    assert.deepEqual(hello.features, ['execpy', 'pinning', 'logs', 'largefile', 'unicodepath']);
  });

  it('stores a file with binary content and gives it back', async () => {
    const data = Buffer.from([0, 1, 2, 255, 10, 13, 0x2d, 0x2d]);
    const path = join(scratch, 'stored.bin');
    await client.store(path, data);
    assert.deepEqual(readFileSync(path), data);
    assert.deepEqual(await client.retrieve(path), data);
    assert.equal(await client.retrieve(join(scratch, 'missing')), null);
  });

  it('extracts a zip into a folder made by mkdtemp', async () => {
    const dir = await client.mkdtemp({ prefix: 'nbx-' });
    try {
      await client.extract(dir, await zipOf({ 'analyzer.py': 'print(1)\n', 'lib/x.txt': 'x' }));
      assert.equal(readFileSync(join(dir, 'analyzer.py'), 'utf8'), 'print(1)\n');
      assert.equal(readFileSync(join(dir, 'lib/x.txt'), 'utf8'), 'x');
      await client.remove(dir);
      assert.equal(existsSync(dir), false);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('executes commands with and without a shell, and in the background', async () => {
    const direct = await client.execute('echo one two');
    assert.equal(direct.stdout, 'one two\n');
    const shell = await client.execute('echo $((6 * 7)) >&2', { shell: true });
    assert.equal(shell.stderr, '42\n');
    const marker = join(scratch, 'async-marker');
    const started = Date.now();
    const background = await client.execute(`sleep 0.3; echo done > ${marker}`, { shell: true, async: true });
    assert.ok(Date.now() - started < 300, 'an async command answers before it ends');
    assert.equal(background.stdout, null);
    for (let i = 0; i < 50 && !existsSync(marker); i++) await sleep(50);
    assert.equal(readFileSync(marker, 'utf8'), 'done\n');
  });

  it('runs a Python file in the background (execpy) in its folder, without keeping the agent port', async () => {
    const dir = join(scratch, 'execpy');
    mkdirSync(dir);
    const script = join(dir, 'job.py');
    // Written aside and renamed, so that the marker the test waits for is never seen half-written.
    writeFileSync(script, 'import os, sys, time\nopen("ran.tmp", "w").write(os.getcwd() + " " + sys.argv[0])\nos.rename("ran.tmp", "ran.txt")\ntime.sleep(3)\n');
    await client.execpy(script, { async: true, cwd: dir });
    const marker = join(dir, 'ran.txt');
    for (let i = 0; i < 50 && !existsSync(marker); i++) await sleep(50);
    assert.equal(readFileSync(marker, 'utf8'), `${dir} ${script}`);
    const sockets = execFileSync('ss', ['-Hltnp', `sport = :${new URL(baseUrl).port}`], { encoding: 'utf8' });
    assert.deepEqual(sockets.match(/pid=\d+/g), [`pid=${agent.pid}`], 'the job does not hold the agent socket open');
  });

  it('keeps the status the analyzer reports', async () => {
    const form = { status: 'complete', description: 'exited' };
    assert.equal((await post('/status', form)).status, 200);
    assert.deepEqual(await client.status(), { message: 'Analysis status', status: 'complete', description: 'exited' });
  });

  it('answers 400 for missing fields and 404 for unknown routes, with a message', async () => {
    const missing = await post('/store', { filepath: join(scratch, 'x') });
    assert.equal(missing.status, 400);
    assert.equal(missing.body.message, 'No file has been provided');
    const unknown = await fetch(`${baseUrl}/nothing-here`);
    assert.equal(unknown.status, 404);
    assert.equal(((await unknown.json()) as { message: string }).message, 'Route not found');
    const gone = await post('/remove', { path: join(scratch, 'never-existed') });
    assert.equal(gone.status, 404);
  });

  it('reports a failing command as a 500 with the error, and lists its environment', async () => {
    const failed = await post('/execute', { command: '/nonexistent/program' });
    assert.equal(failed.status, 500);
    assert.equal(failed.body.message, 'Error executing command');
    assert.match(String(failed.body.traceback), /FileNotFoundError/);
    const environ = await client.environ();
    assert.equal(typeof environ.PATH, 'string');
  });

  it('refuses a zip that is not one, without stopping', async () => {
    const dir = join(scratch, 'bad-zip');
    const form = new FormData();
    form.append('dirpath', dir);
    form.append('zipfile', new Blob([Buffer.from('not a zip')]), 'zipfile');
    const response = await fetch(`${baseUrl}/extract`, { method: 'POST', body: form });
    assert.equal(response.status, 500);
    assert.equal((await client.hello()).version, '0.9');
  });

  it('once pinned, ignores every other client address (the last test: pinning cannot be undone)', async () => {
    const pinned = (await (await fetch(`${baseUrl}/pinning`)).json()) as { client_ip: string };
    assert.equal(pinned.client_ip, '127.0.0.1');
    assert.equal((await client.hello()).version, '0.9');
    const fromElsewhere = await new Promise<string>((resolve) => {
      const request = http.get(`${baseUrl}/`, { localAddress: '127.0.0.2' }, (response) => resolve(`answered ${response.statusCode}`));
      request.on('error', (error) => resolve(`refused: ${error.message}`));
    });
    assert.match(fromElsewhere, /^refused/);
  });
});
