import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { sql } from 'kysely';
import { existsSync } from 'node:fs';
import { machineSchema } from '../../src/config/schema.js';
import { decodeList } from '../../src/db/json-columns.js';
import { form, startTestServer, type TestServer } from '../helpers/server.js';

const hash = (algorithm: string, data: Uint8Array) => createHash(algorithm).update(data).digest('hex');

/**
 * A test double for VirusTotal, an outside service this machine cannot reach: it serves
 * GET /api/v3/files/<hash>/download to the key "vt-key" on loopback.
 */
class FakeVirusTotal {
  readonly files = new Map<string, Uint8Array>();
  readonly requests: Array<{ path: string; key: string | undefined }> = [];
  /** Hashes whose download answers with a redirect to a storage URL, as VirusTotal's can. */
  readonly redirected = new Set<string>();
  private readonly server: Server = createServer((request, response) => {
    const key = request.headers['x-apikey'] as string | undefined;
    this.requests.push({ path: request.url ?? '', key });
    const stored = /^\/storage\/([0-9a-f]+)$/.exec(request.url ?? '');
    if (stored) {
      response.writeHead(200).end(this.files.get(stored[1]!));
      return;
    }
    const match = /^\/api\/v3\/files\/([0-9a-f]+)\/download$/.exec(request.url ?? '');
    const content = match ? this.files.get(match[1]) : undefined;
    if (key === 'vt-key' && match && this.redirected.has(match[1]!)) response.writeHead(302, { location: `/storage/${match[1]}` }).end();
    else if (key !== 'vt-key') response.writeHead(401).end('{"error": {"code": "WrongCredentialsError"}}');
    else if (!content) response.writeHead(404).end('{"error": {"code": "NotFoundError"}}');
    else response.writeHead(200, { 'content-type': 'application/octet-stream' }).end(content);
  });
  url = '';

  async start(): Promise<void> {
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', resolve));
    this.url = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}/api/v3`;
  }

  /** Serves `content` under its md5, sha1 and sha256. */
  add(content: Uint8Array): void {
    for (const algorithm of ['md5', 'sha1', 'sha256']) this.files.set(hash(algorithm, content), content);
  }

  close(): Promise<void> {
    return new Promise((resolve) => this.server.close(() => resolve()));
  }
}

describe('POST /tasks/create/submit', () => {
  let server: TestServer;
  let noKeyServer: TestServer;
  const vt = new FakeVirusTotal();
  let fixtures: string;
  const payload = { 'a.txt': Buffer.from('alpha\n'), 'dir/b.bin': randomBytes(3000), 'dir/deep/c.sh': Buffer.from('#!/bin/sh\necho c\n') };

  before(async () => {
    await vt.start();
    const machines = [machineSchema.parse({ name: 'linux1', platform: 'linux', tags: ['x64'] })];
    server = await startTestServer({
      machines,
      virustotal: { key: 'vt-key', url: vt.url },
      archives: { max_total_size: 2 * 1024 * 1024, max_files: 50 },
    });
    noKeyServer = await startTestServer({ machines, virustotal: { key: '', url: vt.url } });

    fixtures = mkdtempSync(join(tmpdir(), 'nestbox-submit-'));
    const tree = join(fixtures, 'tree');
    mkdirSync(join(tree, 'dir/deep'), { recursive: true });
    for (const [name, data] of Object.entries(payload)) writeFileSync(join(tree, name), data);
    const run = (command: string, args: string[], cwd = tree) => execFileSync(command, args, { cwd, stdio: 'ignore' });
    run('7z', ['a', '-bd', '../plain.zip', '.']);
    run('7z', ['a', '-bd', '../plain.7z', '.']);
    run('7z', ['a', '-bd', '-pinfected', '../infected.zip', '.']);
    run('tar', ['cf', '../plain.tar', '.']);
    run('tar', ['czf', '../plain.tar.gz', '.']);
    writeFileSync(join(fixtures, 'a.txt.gz'), execFileSync('gzip', ['-c', join(tree, 'a.txt')]));
    const nest = join(fixtures, 'nest');
    mkdirSync(nest);
    run('cp', [join(fixtures, 'plain.tar.gz'), join(fixtures, 'infected.zip'), nest]);
    writeFileSync(join(nest, 'note.txt'), 'outer file\n');
    run('7z', ['a', '-bd', '../nested.zip', '.'], nest);
    writeFileSync(join(fixtures, 'zeros.bin'), new Uint8Array(50 * 1024 * 1024));
    run('7z', ['a', '-bd', '-mx=9', 'bomb.zip', 'zeros.bin'], fixtures);
  });
  after(async () => {
    await server.close();
    await noKeyServer.close();
    await vt.close();
    rmSync(fixtures, { recursive: true, force: true });
  });

  const fixture = (name: string) => readFileSync(join(fixtures, name));
  const submit = (body: RequestInit['body'], target = server, path = '/tasks/create/submit', headers: Record<string, string> = {}) =>
    target.json(path, { method: 'POST', body, headers });
  const tasksOf = async (ids: number[], target = server) => Promise.all(ids.map(async (id) => (await target.ctx.stores.tasks.get(id))!));
  const contentsOf = async (ids: number[]) => (await tasksOf(ids)).map((task) => [task.target.split('/').pop(), readFileSync(task.target)] as const);
  const tmpLeftovers = (target = server) => readdirSync(target.ctx.layout.tmp).filter((name) => !name.startsWith('tmp'));

  /** The submission's file tasks hold exactly the archive payload, as separate files. */
  async function assertPayloadTasks(ids: number[]) {
    const contents = await contentsOf(ids);
    assert.deepEqual(contents.map(([name]) => name).sort(), ['a.txt', 'b.bin', 'c.sh']);
    for (const [name, data] of contents) {
      const original = Object.entries(payload).find(([path]) => path.endsWith(name!))![1];
      assert.ok(data.equals(original), `${name} is byte-identical`);
    }
    for (const task of await tasksOf(ids)) {
      const sample = (await server.ctx.stores.samples.get(task.sample_id!))!;
      assert.equal(sample.sha256, hash('sha256', readFileSync(task.target)));
      assert.ok(readFileSync(server.ctx.layout.binary(sample.sha256)).equals(readFileSync(task.target)));
    }
  }

  it('answers 400 when nothing is given', async () => {
    for (const body of [form({}), form({ strings: '' }), form({ strings: ' \n\r\n \n' }), new URLSearchParams({ options: 'a=1' })]) {
      const { status, body: answer } = await submit(body);
      assert.equal(status, 400);
      assert.deepEqual(answer, { message: 'No files or strings have been given!' });
    }
    const json = await submit(JSON.stringify({ strings: 'http://example.com' }), server, '/tasks/create/submit', { 'content-type': 'application/json' });
    assert.equal(json.status, 400);
    assert.match(json.body.message, /multipart\/form-data/);
  });

  it('creates one task per file, `file` parts first, all in one submission', async () => {
    const data = new FormData();
    data.append('files', new Blob(['second']), 'second.txt');
    data.append('file', new Blob(['first']), 'first.txt');
    data.append('files', new Blob(['third']), 'third.txt');
    const { status, body } = await submit(data, server, '/v1/tasks/create/submit');
    assert.equal(status, 200);
    assert.deepEqual(Object.keys(body), ['errors', 'submit_id', 'task_ids']);
    assert.deepEqual(body.errors, []);
    assert.equal(body.task_ids.length, 3);
    const contents = await contentsOf(body.task_ids);
    assert.deepEqual(contents.map(([name, data]) => [name, data.toString()]), [['first.txt', 'first'], ['second.txt', 'second'], ['third.txt', 'third']]);
    for (const task of await tasksOf(body.task_ids)) {
      assert.equal(task.submit_id, body.submit_id);
      assert.equal(task.category, 'file');
    }
    assert.deepEqual(tmpLeftovers(), []);
  });

  it('keeps two uploads with the same name apart (Cuckoo overwrites one with the other)', async () => {
    const { body } = await submit(form({}, [['files', 'same.bin', 'one'], ['files', 'same.bin', 'two']]));
    assert.deepEqual((await contentsOf(body.task_ids)).map(([, data]) => data.toString()), ['one', 'two']);
  });

  it('applies the form fields, normalises options and keeps route (Cuckoo drops it)', async () => {
    const { status, body } = await submit(form({
      options: 'route=internet, b=2,a=1,noequals',
      timeout: '90',
      priority: '2',
      tags: 'x64',
      custom: 'cu',
      owner: 'bob',
      package: 'generic',
      platform: 'linux',
      machine: 'linux1',
      clock: '03-04-2021 05:06:07',
      enforce_timeout: 'yes',
      strings: 'http://example.com/x',
    }, [['files', 'f.txt', 'f']]));
    assert.equal(status, 200);
    const tasks = await tasksOf(body.task_ids);
    assert.deepEqual(tasks.map((task) => task.category), ['file', 'url']);
    for (const task of tasks) {
      assert.equal(task.options, 'a=1,b=2,procmemdump=yes,route=internet');
      assert.equal(task.timeout, 90);
      assert.equal(task.priority, 2);
      assert.deepEqual(decodeList(task.tags), ['x64']);
      assert.equal(task.custom, 'cu');
      assert.equal(task.owner, 'bob');
      assert.equal(task.package, 'generic');
      assert.equal(task.platform, 'linux');
      assert.equal(task.machine, 'linux1');
      assert.equal(task.clock, '2021-03-04T05:06:07.000Z');
      assert.equal(task.memory, 0, 'memory follows tasks.memory_dump (false)');
      assert.equal(task.enforce_timeout, 1);
    }
  });

  it('answers 400 for fields it cannot use, creating no submission', async () => {
    const submissions = async () => (await server.db.selectFrom('submissions').select('id').execute()).length;
    const before = await submissions();
    for (const [fields, message] of [
      [{ machine: 'ghost' }, /^Unknown machine "ghost"/],
      [{ memory: 'kinda' }, /^memory must be a boolean/],
      [{ priority: '-2' }, /^priority must be an integer/],
      [{ tags: 'gpu' }, /^No configured machine has all of the tags "gpu"/],
    ] as const) {
      const { status, body } = await submit(form({ ...fields, strings: 'http://example.com' }, [['files', 'x.txt', 'x']]));
      assert.equal(status, 400);
      assert.match(body.message, message);
    }
    assert.equal(await submissions(), before);
    assert.deepEqual(tmpLeftovers(), []);
  });

  for (const name of ['plain.zip', 'plain.7z', 'plain.tar', 'plain.tar.gz', 'infected.zip']) {
    it(`creates a task for each file inside ${name}`, async () => {
      const { status, body } = await submit(form({}, [['files', name, fixture(name)]]));
      assert.equal(status, 200);
      assert.deepEqual(body.errors, []);
      assert.equal(body.task_ids.length, 3);
      await assertPayloadTasks(body.task_ids);
      assert.deepEqual(tmpLeftovers(), []);
    });
  }

  it('records where each file of an archive came from: category archive, the archive as a sample of its own, the path inside', async () => {
    const zip = fixture('plain.zip');
    const { body } = await submit(form({}, [['files', 'plain.zip', zip], ['files', 'loose.txt', 'loose']]));
    assert.deepEqual(body.errors, []);
    const tasks = await tasksOf(body.task_ids);
    const archiveSample = (await server.ctx.stores.samples.findBySha256(hash('sha256', zip)))!;
    assert.ok(archiveSample, 'the archive has a sample row');
    assert.equal(archiveSample.md5, hash('md5', zip));
    assert.match(archiveSample.file_type, /^Zip archive data/);
    assert.ok(readFileSync(server.ctx.layout.binary(archiveSample.sha256)).equals(zip), 'the archive binary is stored');
    assert.equal((await server.json(`/files/view/sha256/${archiveSample.sha256}`)).body.sample.id, archiveSample.id);
    assert.ok(Buffer.from(await (await server.fetch(`/files/get/${archiveSample.sha256}`)).arrayBuffer()).equals(zip));
    const members = tasks.filter((task) => task.category === 'archive');
    assert.deepEqual(members.map((task) => task.archive_member).sort(), Object.keys(payload).sort());
    for (const task of members) {
      assert.equal(task.archive_id, archiveSample.id);
      assert.equal(task.archive_name, 'plain.zip');
      assert.equal(task.target.split('/').pop(), task.archive_member!.split('/').pop(), 'the target is the unpacked file');
      const { task: viewed } = (await server.json(`/tasks/view/${task.id}`)).body;
      assert.equal(viewed.category, 'archive');
      assert.equal(viewed.sample_id, task.sample_id);
      assert.equal(viewed.sample.sha256, hash('sha256', readFileSync(task.target)), 'the sample is the unpacked file');
    }
    const loose = tasks.find((task) => task.category === 'file')!;
    assert.deepEqual([loose.archive_id, loose.archive_name, loose.archive_member], [null, null, null]);
    assert.equal(members.length + 1, tasks.length);
    assert.deepEqual(tmpLeftovers(), []);
  });

  it('names nested and tar members by their path inside the submitted archive', async () => {
    const nested = await tasksOf((await submit(form({}, [['files', 'nested.zip', fixture('nested.zip')]]))).body.task_ids);
    assert.deepEqual(new Set(nested.map((task) => task.archive_name)), new Set(['nested.zip']));
    assert.deepEqual(nested.map((task) => task.archive_member).sort(), [
      'infected.zip/a.txt', 'infected.zip/dir/b.bin', 'infected.zip/dir/deep/c.sh', 'note.txt',
      'plain.tar.gz/plain.tar/a.txt', 'plain.tar.gz/plain.tar/dir/b.bin', 'plain.tar.gz/plain.tar/dir/deep/c.sh',
    ]);
    const tar = await tasksOf((await submit(form({}, [['files', 'plain.tar', fixture('plain.tar')]]))).body.task_ids);
    assert.deepEqual(tar.map((task) => task.archive_member).sort(), Object.keys(payload).sort(), 'tar\'s ./ steps are dropped');
  });

  it('unpacks a gzip file to the file inside', async () => {
    const { body } = await submit(form({}, [['files', 'a.txt.gz', fixture('a.txt.gz')]]));
    assert.deepEqual(body.errors, []);
    assert.deepEqual((await contentsOf(body.task_ids)).map(([name, data]) => [name, data.toString()]), [['a.txt', 'alpha\n']]);
  });

  it('opens nested archives', async () => {
    const { body } = await submit(form({}, [['file', 'nested.zip', fixture('nested.zip')]]));
    assert.deepEqual(body.errors, []);
    const names = (await contentsOf(body.task_ids)).map(([name]) => name).sort();
    assert.deepEqual(names, ['a.txt', 'a.txt', 'b.bin', 'b.bin', 'c.sh', 'c.sh', 'note.txt']);
  });

  it('refuses a zip bomb as an error entry while the other items go on', async () => {
    const { status, body } = await submit(form({ strings: 'http://example.com/after' }, [['files', 'bomb.zip', fixture('bomb.zip')], ['files', 'ok.txt', 'ok']]));
    assert.equal(status, 200);
    assert.deepEqual(body.errors, ['bomb.zip: unpacks to more than 2097152 bytes (archives.max_total_size); refused']);
    const tasks = await tasksOf(body.task_ids);
    assert.equal(tasks.length, 2);
    assert.equal(readFileSync(tasks[0].target, 'utf8'), 'ok');
    assert.equal(tasks[1].target, 'http://example.com/after');
    assert.deepEqual(tmpLeftovers(), []);
  });

  it('turns strings into URL tasks, trying http:// in front, and reports the rest', async () => {
    const strings = 'http://google.com\ncuckoosandbox.org\r\n\nnot a url at all\nhttps://1.2.3.4:9001/wow\n  spaced.example.org  ';
    const { status, body } = await submit(new URLSearchParams({ strings }));
    assert.equal(status, 200);
    assert.deepEqual(body.errors, ["'not a url at all' was neither a valid hash or url"]);
    const tasks = await tasksOf(body.task_ids);
    assert.deepEqual(tasks.map((task) => task.target), ['http://google.com', 'http://cuckoosandbox.org', 'https://1.2.3.4:9001/wow', 'http://spaced.example.org']);
    for (const task of tasks) {
      assert.equal(task.category, 'url');
      assert.equal(task.sample_id, null);
      assert.equal(task.submit_id, body.submit_id);
    }
  });

  it('answers junk lines with per-item errors and makes tasks of the real items only', async () => {
    const junk = ['0000000000000000000000000000123', 'http://0000123/', '1.2.3', 'someone@mail.example', 'ftp://files.example/x', 'nodot', '[not]'];
    const strings = ['http://real.example/a', ...junk, 'evil.example', '192.0.2.7:8080/x'].join('\n');
    const { status, body } = await submit(form({ strings }));
    assert.equal(status, 200);
    assert.deepEqual(body.errors, junk.map((line) => `'${line}' was neither a valid hash or url`));
    const tasks = await tasksOf(body.task_ids);
    assert.deepEqual(tasks.map((task) => [task.category, task.target]), [
      ['url', 'http://real.example/a'],
      ['url', 'http://evil.example'],
      ['url', 'http://192.0.2.7:8080/x'],
    ]);
    const onlyJunk = await submit(form({ strings: junk.join('\n') }));
    assert.equal(onlyJunk.status, 200);
    assert.deepEqual(onlyJunk.body.task_ids, []);
    assert.equal(onlyJunk.body.errors.length, junk.length);
  });

  it('downloads hashes from the VirusTotal API with the key, by md5, sha1 or sha256', async () => {
    const sample = randomBytes(4096);
    vt.add(sample);
    vt.add(fixture('plain.zip'));
    const lines = [hash('md5', sample), hash('sha1', sample).toUpperCase(), hash('sha256', sample), hash('sha256', fixture('plain.zip'))];
    const seen = vt.requests.length;
    const { status, body } = await submit(form({ strings: lines.join('\n') }));
    assert.equal(status, 200);
    assert.deepEqual(body.errors, []);
    const tasks = await tasksOf(body.task_ids);
    assert.equal(tasks.length, 3 + 3, 'the zip became its three files');
    for (const task of tasks.slice(0, 3)) {
      assert.ok(readFileSync(task.target).equals(sample));
      assert.equal((await server.ctx.stores.samples.get(task.sample_id!))!.sha256, hash('sha256', sample));
    }
    assert.equal(tasks[0].target.split('/').pop(), lines[0]);
    await assertPayloadTasks(body.task_ids.slice(3));
    assert.deepEqual(vt.requests.slice(seen).map((request) => request.key), ['vt-key', 'vt-key', 'vt-key', 'vt-key']);
    assert.equal(vt.requests[seen].path, `/api/v3/files/${lines[0]}/download`);
  });

  it('follows a download redirect without sending the key there', async () => {
    const sample = randomBytes(1024);
    vt.add(sample);
    const wanted = hash('sha256', sample);
    vt.redirected.add(wanted);
    const seen = vt.requests.length;
    const { status, body } = await submit(form({ strings: wanted }));
    assert.equal(status, 200);
    assert.deepEqual(body.errors, []);
    const [task] = await tasksOf(body.task_ids);
    assert.ok(readFileSync(task!.target).equals(sample));
    assert.deepEqual(vt.requests.slice(seen), [
      { path: `/api/v3/files/${wanted}/download`, key: 'vt-key' },
      { path: `/storage/${wanted}`, key: undefined },
    ]);
  });

  it('reports hashes VirusTotal does not have or answers wrongly', async () => {
    const missing = 'd41d8cd98f00b204e9800998ecf8427e';
    const liar = hash('sha256', Buffer.from('what was asked for'));
    vt.files.set(liar, Buffer.from('something else'));
    const { status, body } = await submit(form({ strings: `${missing}\n${liar}\nhttp://example.com` }));
    assert.equal(status, 200);
    assert.deepEqual(body.errors, [
      `Error retrieving file hash: Could not fetch hash "${missing}" from VirusTotal (HTTP 404)`,
      `Error retrieving file hash: the file VirusTotal returned for "${liar}" has a different hash`,
    ]);
    assert.equal(body.task_ids.length, 1);
    assert.deepEqual(tmpLeftovers(), []);
  });

  it('reports hashes as errors when no VirusTotal key is configured, without asking it', async () => {
    const wanted = hash('sha256', Buffer.from('anything'));
    const seen = vt.requests.length;
    const { status, body } = await submit(form({ strings: wanted }), noKeyServer);
    assert.equal(status, 200);
    assert.deepEqual(body, {
      errors: [`Error retrieving file hash: no VirusTotal key is configured for "${wanted}"`],
      submit_id: body.submit_id,
      task_ids: [],
    });
    assert.equal(typeof body.submit_id, 'number');
    assert.equal(vt.requests.length, seen);
  });

  it('writes a submission all or nothing: a database failure leaves no rows, targets or new binaries', async () => {
    // A real database failure on the last task (the URL), provoked with a trigger: nothing of nestbox is replaced.
    const { db } = server;
    const known = Buffer.from('first');
    assert.ok(existsSync(server.ctx.layout.binary(hash('sha256', known))), 'stored by an earlier test');
    await sql`CREATE TRIGGER refuse_url BEFORE INSERT ON tasks WHEN NEW.owner = 'explode' AND NEW.category = 'url' BEGIN SELECT RAISE(ABORT, 'refused by test trigger'); END`.execute(db);
    try {
      const fresh = randomBytes(3000);
      const count = async (table: 'tasks' | 'samples' | 'submissions') => (await db.selectFrom(table).select('id').execute()).length;
      const before = { tasks: await count('tasks'), samples: await count('samples'), submissions: await count('submissions') };
      const tmpBefore = readdirSync(server.ctx.layout.tmp).sort();
      writeFileSync(join(fixtures, 'fresh-inner.bin'), randomBytes(2000));
      execFileSync('7z', ['a', '-bd', 'fresh.zip', 'fresh-inner.bin'], { cwd: fixtures, stdio: 'ignore' });
      const freshZip = fixture('fresh.zip');
      const parts: Array<[string, string, string | Uint8Array]> = [['files', 'known.txt', known], ['files', 'fresh.bin', fresh], ['files', 'fresh.zip', freshZip]];
      const { status } = await submit(form({ owner: 'explode', strings: 'http://example.com' }, parts));
      assert.equal(status, 500);
      assert.equal(existsSync(server.ctx.layout.binary(hash('sha256', freshZip))), false, 'the new archive binary is removed');
      assert.deepEqual({ tasks: await count('tasks'), samples: await count('samples'), submissions: await count('submissions') }, before);
      assert.deepEqual(readdirSync(server.ctx.layout.tmp).sort(), tmpBefore);
      assert.equal(existsSync(server.ctx.layout.binary(hash('sha256', fresh))), false, 'the new binary is removed');
      assert.ok(existsSync(server.ctx.layout.binary(hash('sha256', known))), 'the binary other samples use stays');
    } finally {
      await sql`DROP TRIGGER refuse_url`.execute(db);
    }
  });

  it('takes memory from tasks.memory_dump unless the form says', async () => {
    const memoryServer = await startTestServer({ tasks: { memory_dump: true } });
    try {
      const absent = await submit(form({ strings: 'http://example.com' }), memoryServer);
      const given = await submit(form({ strings: 'http://example.com', memory: 'off' }), memoryServer);
      assert.equal((await tasksOf(absent.body.task_ids, memoryServer))[0].memory, 1);
      assert.equal((await tasksOf(given.body.task_ids, memoryServer))[0].memory, 0);
    } finally {
      await memoryServer.close();
    }
  });
});

describe('POST /tasks/create/submit with a small upload limit', () => {
  let server: TestServer;
  before(async () => {
    server = await startTestServer({ api: { upload_limit: 2000 } });
  });
  after(() => server.close());

  it('answers 413 when one of the files is too large, creating nothing', async () => {
    const { status, body } = await server.json('/tasks/create/submit', {
      method: 'POST',
      body: form({}, [['files', 'small.txt', 'small'], ['files', 'large.bin', randomBytes(10_000)]]),
    });
    assert.equal(status, 413);
    assert.match(body.message, /larger than the limit of 2000 bytes/);
    assert.deepEqual(readdirSync(server.ctx.layout.tmp), []);
    assert.deepEqual(readdirSync(server.ctx.layout.binaries), []);
    assert.deepEqual(await server.ctx.stores.tasks.list(), []);
  });
});
