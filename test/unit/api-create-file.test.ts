import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { machineSchema } from '../../src/config/schema.js';
import { decodeList } from '../../src/db/json-columns.js';
import { sql } from 'kysely';
import { createHash } from 'node:crypto';
import { form, startTestServer, type TestServer } from '../helpers/server.js';

const MACHINES = [
  machineSchema.parse({ name: 'linux1', platform: 'linux', tags: ['x64'] }),
  machineSchema.parse({ name: 'linux2', platform: 'linux', tags: ['x64', 'office'] }),
];

/** Output of a command-line tool given a file, for comparing hashes with independent implementations. */
function cli(command: string, args: string[]): string {
  return execFileSync(command, args, { encoding: 'utf8' }).trim();
}

function cliHashes(path: string) {
  const first = (command: string) => cli(command, [path]).split(/\s+/)[0];
  const ssdeepLine = cli('ssdeep', ['-b', '-s', path]).split('\n')[1];
  const crc = cli('python3', ['-c', 'import sys,zlib; print("%08X" % (zlib.crc32(open(sys.argv[1],"rb").read()) & 0xffffffff))', path]);
  return {
    md5: first('md5sum'),
    sha1: first('sha1sum'),
    sha256: first('sha256sum'),
    sha512: first('sha512sum'),
    crc32: crc,
    ssdeep: ssdeepLine.slice(0, ssdeepLine.lastIndexOf(',"')),
    file_type: cli('file', ['-b', path]),
  };
}

const post = (server: TestServer, body: RequestInit['body'], path = '/tasks/create/file', headers: Record<string, string> = {}) =>
  server.json(path, { method: 'POST', body, headers });

const upload = (server: TestServer, fields: Record<string, string> = {}, name = 'sample.bin', content: string | Uint8Array = 'hello sample\n') =>
  post(server, form(fields, [['file', name, content]]));

describe('POST /tasks/create/file', () => {
  let server: TestServer;
  before(async () => {
    server = await startTestServer({ machines: MACHINES });
  });
  after(() => server.close());

  /** Folders and files left in tmppath: only task target folders (tmp*) may remain. */
  const tmpLeftovers = () => readdirSync(server.ctx.layout.tmp).filter((name) => !name.startsWith('tmp'));
  const taskOf = (id: number) => server.ctx.stores.tasks.get(id);

  it('stores the sample content-addressed and byte-identical, with hashes equal to the reference tools', async () => {
    const content = randomBytes(3 * 1024 * 1024 + 17);
    const { status, body, response } = await upload(server, {}, 'payload.exe', content);
    assert.equal(status, 200);
    assert.deepEqual(Object.keys(body), ['task_id']);
    assert.equal(typeof body.task_id, 'number');
    assert.equal(response.headers.get('content-type'), 'application/json');

    const task = await taskOf(body.task_id);
    assert.ok(task);
    assert.equal(task.category, 'file');
    assert.equal(task.status, 'pending');
    assert.match(task.target, new RegExp(`^${server.ctx.layout.tmp}/tmp[^/]+/payload\\.exe$`));
    assert.ok(readFileSync(task.target).equals(content), 'the target is byte-identical');

    const sample = await server.ctx.stores.samples.get(task.sample_id!);
    assert.ok(sample);
    const binary = server.ctx.layout.binary(sample.sha256);
    assert.ok(readFileSync(binary).equals(content), 'storage/binaries/<sha256> is byte-identical');
    const reference = cliHashes(binary);
    const { id: _id, file_size, ...hashes } = sample;
    assert.deepEqual(hashes, reference);
    assert.equal(file_size, content.length);
    assert.deepEqual(tmpLeftovers(), []);
  });

  it('answers under /v1 too, and the pending sample can be fetched at once', async () => {
    const { status, body } = await post(server, form({}, [['file', 'v1.txt', 'v1 alias\n']]), '/v1/tasks/create/file');
    assert.equal(status, 200);
    const task = await taskOf(body.task_id);
    const sample = await server.ctx.stores.samples.get(task!.sample_id!);
    const download = await server.fetch(`/files/get/${sample!.sha256}`);
    assert.equal(download.status, 200);
    assert.equal(await download.text(), 'v1 alias\n');
  });

  it('stores every field, and the API shows them as Cuckoo does', async () => {
    const { status, body } = await upload(server, {
      package: 'exe',
      timeout: '60',
      priority: '3',
      options: 'a=1,b,c=2=3,route=internet',
      machine: 'linux2',
      platform: 'linux',
      tags: 't1, t2,,',
      custom: 'cust',
      owner: 'me',
      clock: '01-02-2019 10:11:12',
      memory: 'yes',
      enforce_timeout: 'True',
    });
    assert.equal(status, 200);
    const task = await taskOf(body.task_id);
    assert.equal(task!.options, 'a=1,b,c=2=3,route=internet', 'options are stored raw');
    const view = await server.json(`/tasks/view/${body.task_id}`);
    assert.equal(view.status, 200);
    const shown = view.body.task;
    assert.equal(shown.package, 'exe');
    assert.equal(shown.timeout, 60);
    assert.equal(shown.priority, 3);
    assert.deepEqual(shown.options, { a: '1', c: '2=3', route: 'internet' });
    assert.equal(shown.machine, 'linux2');
    assert.equal(shown.platform, 'linux');
    assert.deepEqual(shown.tags, ['t1', 't2']);
    assert.equal(shown.custom, 'cust');
    assert.equal(shown.owner, 'me');
    assert.equal(task!.clock, '2019-01-02T10:11:12.000Z');
    assert.equal(shown.memory, true);
    assert.equal(shown.enforce_timeout, true);
    assert.equal(shown.category, 'file');
    assert.equal(shown.sample.file_size, 'hello sample\n'.length);
  });

  it('uses the documented defaults for absent and empty fields', async () => {
    const variants: Array<Record<string, string>> = [{}, { package: '', timeout: '', priority: '', options: '', machine: '', platform: '', tags: '', custom: '', owner: '', clock: '', memory: '', enforce_timeout: '', unique: '' }];
    for (const fields of variants) {
      const before = Date.now();
      const { status, body } = await upload(server, fields, 'defaults.txt', `defaults ${Object.keys(fields).length}`);
      assert.equal(status, 200);
      const task = (await taskOf(body.task_id))!;
      assert.equal(task.timeout, 0);
      assert.equal(task.priority, server.ctx.config.tasks.default_priority);
      assert.equal(task.package, '');
      assert.equal(task.machine, '');
      assert.equal(task.platform, '');
      assert.equal(task.options, '');
      assert.deepEqual(decodeList(task.tags), []);
      assert.equal(task.owner, '');
      assert.equal(task.custom, '');
      assert.equal(task.memory, 0);
      assert.equal(task.enforce_timeout, 0);
      const clock = Date.parse(task.clock);
      assert.ok(clock >= before - 1000 && clock <= Date.now() + 1000, 'clock defaults to now');
    }
  });

  it('accepts Cuckoo\'s boolean forms in any case, and integers', async () => {
    const cases: Array<[string, number]> = [
      ['true', 1], ['True', 1], ['TRUE', 1], ['yes', 1], ['Yes', 1], ['on', 1], ['1', 1], ['2', 1],
      ['false', 0], ['False', 0], ['None', 0], ['no', 0], ['off', 0], ['0', 0], ['00', 0],
    ];
    for (const [value, expected] of cases) {
      const { status, body } = await upload(server, { memory: value, enforce_timeout: value }, 'bool.txt', `bool ${value}`);
      assert.equal(status, 200, value);
      const task = (await taskOf(body.task_id))!;
      assert.equal(task.memory, expected, `memory=${value}`);
      assert.equal(task.enforce_timeout, expected, `enforce_timeout=${value}`);
    }
  });

  it('answers 400 naming the field for values it cannot use, creating nothing', async () => {
    const before = (await server.ctx.stores.tasks.list()).length;
    const cases: Array<[Record<string, string>, RegExp]> = [
      [{ memory: 'maybe' }, /^memory must be a boolean/],
      [{ enforce_timeout: 'y' }, /^enforce_timeout must be a boolean/],
      [{ unique: 'sure' }, /^unique must be a boolean/],
      [{ priority: 'abc' }, /^priority must be an integer from 1 to 3; got "abc"$/],
      [{ priority: '0' }, /^priority must be an integer from 1 to 3/],
      [{ priority: '4' }, /^priority must be an integer from 1 to 3/],
      [{ priority: '1.5' }, /^priority must be an integer/],
      [{ timeout: 'xyz' }, /^timeout must be an integer from 0 to 3600/],
      [{ timeout: '-1' }, /^timeout must be an integer/],
      [{ timeout: '3601' }, /^timeout must be an integer/],
      [{ clock: 'yesterday' }, /^clock must be a time like "01-02-2019 10:11:12"/],
      [{ clock: '02-30-2019 10:11:12' }, /^clock must be a time/],
      [{ clock: '2019-01-02 10:11:12' }, /^clock must be a time/],
      [{ owner: 'o'.repeat(65) }, /^owner must be at most 64 characters/],
      [{ machine: 'nosuchvm' }, /^Unknown machine "nosuchvm"/],
      [{ platform: 'darwin' }, /^No configured machine has platform "darwin", so such a task could never run$/],
      [{ tags: 'x64,gpu' }, /^No configured machine has all of the tags "x64", "gpu"/],
      [{ platform: 'darwin', tags: 'x64' }, /^No configured machine has platform "darwin" and all of the tags "x64"/],
      // No Windows machine: Wine on the linux machines serves platform windows, and runs Windows programs only.
      [{ platform: 'windows' }, /^bad\.txt cannot run as platform "windows": no Windows machine is configured, .* and it is none \(ASCII text/],
    ];
    for (const [fields, message] of cases) {
      const { status, body } = await upload(server, fields, 'bad.txt', `bad ${JSON.stringify(fields)}`);
      assert.equal(status, 400, JSON.stringify(fields));
      assert.match(body.message, message);
    }
    assert.equal((await server.ctx.stores.tasks.list()).length, before);
    assert.deepEqual(tmpLeftovers(), []);
  });

  it('accepts platform and tags that a configured machine has', async () => {
    const { status, body } = await upload(server, { platform: 'linux', tags: 'office,x64' }, 'fits.txt');
    assert.equal(status, 200);
    assert.deepEqual(decodeList((await taskOf(body.task_id))!.tags), ['office', 'x64']);
  });

  it('keeps only the last component of the file name, / and \\ both separating', async () => {
    for (const [sent, kept] of [['C:\\Users\\x\\evil.exe', 'evil.exe'], ['dir/sub/x.bin', 'x.bin'], ['résumé ‮.pdf', 'résumé ‮.pdf']]) {
      const { status, body } = await upload(server, {}, sent, `name ${sent}`);
      assert.equal(status, 200, sent);
      const task = (await taskOf(body.task_id))!;
      assert.equal(task.target.split('/').pop(), kept);
      assert.ok(existsSync(task.target));
    }
  });

  it('answers JSON 400s for a missing file, another field name, and unusable file names', async () => {
    const cases: Array<[FormData, RegExp]> = [
      [form({ package: 'exe' }), /^No file has been given/],
      [form({}, [['files', 'a.txt', 'x']]), /^No file has been given/],
      [form({ file: 'not a file part' }), /^No file has been given/],
      [form({}, [['file', '', 'x']]), /^The uploaded file has an empty file name$/],
      [form({}, [['file', '..', 'x']]), /does not end in a usable file name/],
      [form({}, [['file', 'dir/.', 'x']]), /does not end in a usable file name/],
      [form({}, [['file', 'dir/', 'x']]), /does not end in a usable file name/],
      [form({}, [['file', `${'n'.repeat(256)}.exe`, 'x']]), /longer than 255 bytes/],
    ];
    for (const [body, message] of cases) {
      const answer = await post(server, body);
      assert.equal(answer.status, 400);
      assert.match(answer.body.message, message);
    }
    assert.deepEqual(tmpLeftovers(), []);
  });

  it('refuses a NUL in the file name', async () => {
    const boundary = 'nestboxboundary';
    const body = Buffer.concat([
      Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="a\0b.exe"\r\nContent-Type: application/octet-stream\r\n\r\n`),
      Buffer.from('content'),
      Buffer.from(`\r\n--${boundary}--\r\n`),
    ]);
    const answer = await post(server, body, '/tasks/create/file', { 'content-type': `multipart/form-data; boundary=${boundary}` });
    assert.equal(answer.status, 400);
    assert.match(answer.body.message, /NUL/);
  });

  it('uses the first file part only, and the first value of a repeated field', async () => {
    const data = form({ owner: 'first' }, [['file', 'one.txt', 'one'], ['file', 'two.txt', 'two']]);
    data.append('owner', 'second');
    const { status, body } = await post(server, data);
    assert.equal(status, 200);
    const task = (await taskOf(body.task_id))!;
    assert.equal(readFileSync(task.target, 'utf8'), 'one');
    assert.equal(task.owner, 'first');
  });

  it('answers 400 for bodies that are not forms', async () => {
    const json = await post(server, JSON.stringify({ file: 'x' }), '/tasks/create/file', { 'content-type': 'application/json' });
    assert.equal(json.status, 400);
    assert.match(json.body.message, /multipart\/form-data/);
    const urlencoded = await post(server, new URLSearchParams({ package: 'exe' }));
    assert.equal(urlencoded.status, 400);
    assert.match(urlencoded.body.message, /^No file has been given/);
  });

  it('accepts an empty file', async () => {
    const { status, body } = await upload(server, {}, 'empty.bin', '');
    assert.equal(status, 200);
    const sample = (await server.ctx.stores.samples.get((await taskOf(body.task_id))!.sample_id!))!;
    assert.equal(sample.file_size, 0);
    assert.equal(sample.file_type, 'empty');
    assert.equal(sample.crc32, '00000000');
    assert.equal(sample.ssdeep, '3::');
    assert.equal(sample.md5, 'd41d8cd98f00b204e9800998ecf8427e');
  });

  it('de-duplicates samples by sha256 and gives every task its own target', async () => {
    const first = await upload(server, {}, 'same-a.bin', 'same content');
    const second = await upload(server, {}, 'same-b.bin', 'same content');
    const [a, b] = [(await taskOf(first.body.task_id))!, (await taskOf(second.body.task_id))!];
    assert.equal(a.sample_id, b.sample_id);
    assert.notEqual(a.target, b.target);
    assert.equal(readFileSync(b.target, 'utf8'), 'same content');
    const sample = (await server.ctx.stores.samples.get(a.sample_id!))!;
    assert.equal(readFileSync(server.ctx.layout.binary(sample.sha256), 'utf8'), 'same content');
  });

  it('refuses with unique=true a file that already has a task, leaving nothing behind', async () => {
    const content = `unique ${Date.now()}`;
    const first = await upload(server, { unique: 'true' }, 'u.bin', content);
    assert.equal(first.status, 200);
    const targetsBefore = readdirSync(server.ctx.layout.tmp).length;
    const again = await upload(server, { unique: 'yes' }, 'u2.bin', content);
    assert.equal(again.status, 400);
    assert.deepEqual(again.body, { message: 'This file has already been submitted' });
    assert.equal(readdirSync(server.ctx.layout.tmp).length, targetsBefore);
    const without = await upload(server, { unique: 'false' }, 'u3.bin', content);
    assert.equal(without.status, 200);
  });

  it('leaves no rows or files behind when the database fails while writing the task', async () => {
    // A real database failure, provoked with a trigger: nothing of nestbox is replaced.
    const { db } = server;
    await sql`CREATE TRIGGER refuse_task BEFORE INSERT ON tasks WHEN NEW.owner = 'explode' BEGIN SELECT RAISE(ABORT, 'refused by test trigger'); END`.execute(db);
    try {
      const content = randomBytes(2000);
      const sha256 = createHash('sha256').update(content).digest('hex');
      const tmpBefore = readdirSync(server.ctx.layout.tmp).sort();
      const { status, body } = await upload(server, { owner: 'explode' }, 'boom.bin', content);
      assert.equal(status, 500);
      assert.equal(typeof body.message, 'string');
      assert.equal(await server.ctx.stores.samples.findBySha256(sha256), undefined);
      assert.equal(existsSync(server.ctx.layout.binary(sha256)), false);
      assert.deepEqual(readdirSync(server.ctx.layout.tmp).sort(), tmpBefore);
    } finally {
      await sql`DROP TRIGGER refuse_task`.execute(db);
    }
  });

  it('creates every task of 300 concurrent uploads, with unique ids', async () => {
    const before = (await server.ctx.stores.tasks.list()).length;
    const answers = await Promise.all(
      Array.from({ length: 300 }, (_, i) => upload(server, { owner: 'crowd' }, `c${i}.bin`, `concurrent ${i % 50}`)),
    );
    for (const answer of answers) assert.equal(answer.status, 200, JSON.stringify(answer.body));
    const ids = answers.map((answer) => answer.body.task_id as number);
    assert.equal(new Set(ids).size, 300);
    const tasks = await server.ctx.stores.tasks.list({ owner: 'crowd' });
    assert.equal(tasks.length, 300);
    assert.deepEqual(tasks.map((t) => t.id).sort((x, y) => x - y), [...ids].sort((x, y) => x - y));
    assert.equal((await server.ctx.stores.tasks.list()).length, before + 300);
    assert.equal(new Set(tasks.map((t) => t.sample_id)).size, 50, 'equal contents share a sample');
    for (const task of tasks) assert.equal(readFileSync(task.target, 'utf8'), `concurrent ${Number(task.target.match(/c(\d+)\.bin$/)![1]) % 50}`);
    assert.deepEqual(tmpLeftovers(), []);
  });

  it('links a stored sample again from its binary, and stores it anew if the binary has gone', async () => {
    for (const content of [randomBytes(100), randomBytes(200 * 1024)]) {
      const sha256 = createHash('sha256').update(content).digest('hex');
      const first = await upload(server, {}, 'again.bin', content);
      const binary = server.ctx.layout.binary(sha256);
      const second = await upload(server, {}, 'again.bin', content);
      assert.equal(second.status, 200);
      const target = (await taskOf(second.body.task_id))!.target;
      assert.deepEqual(readFileSync(target), content);
      assert.equal(statSync(target).ino, statSync(binary).ino, 'the target is the stored binary, not another copy');
      assert.notEqual(target, (await taskOf(first.body.task_id))!.target);

      execFileSync('rm', [binary]);
      const third = await upload(server, {}, 'again.bin', content);
      assert.equal(third.status, 200);
      assert.deepEqual(readFileSync((await taskOf(third.body.task_id))!.target), content);
      assert.deepEqual(readFileSync(binary), content, 'the binary is back in storage');
      const sample = (await server.ctx.stores.samples.findBySha256(sha256))!;
      assert.equal((await taskOf(third.body.task_id))!.sample_id, sample.id);
      assert.deepEqual(tmpLeftovers(), []);
    }
  });
});

describe('POST /tasks/create/file with a small upload limit', () => {
  let server: TestServer;
  before(async () => {
    server = await startTestServer({ api: { upload_limit: 1000 } });
  });
  after(() => server.close());

  const assertNothingStored = async () => {
    assert.deepEqual(readdirSync(server.ctx.layout.tmp), []);
    assert.deepEqual(readdirSync(server.ctx.layout.binaries), []);
    assert.deepEqual(await server.ctx.stores.tasks.list(), []);
  };

  it('accepts a file of exactly the limit', async () => {
    const { status, body } = await upload(server, {}, 'exact.bin', randomBytes(1000));
    assert.equal(status, 200);
    const task = (await server.ctx.stores.tasks.get(body.task_id))!;
    assert.equal(statSync(task.target).size, 1000);
    await server.ctx.stores.tasks.delete(task.id);
  });

  it('answers 413 for a larger file and keeps no partial file', async () => {
    for (const name of readdirSync(server.ctx.layout.tmp)) execFileSync('rm', ['-rf', join(server.ctx.layout.tmp, name)]);
    for (const name of readdirSync(server.ctx.layout.binaries)) execFileSync('rm', ['-f', join(server.ctx.layout.binaries, name)]);
    const { status, body } = await upload(server, {}, 'big.bin', randomBytes(5000));
    assert.equal(status, 413);
    assert.equal(body.message, 'The uploaded file is larger than the limit of 1000 bytes (api.upload_limit)');
    await assertNothingStored();
  });

  it('answers 413 from Content-Length before reading a huge body', async () => {
    const { status, body } = await upload(server, {}, 'huge.bin', new Uint8Array(3 * 1024 * 1024));
    assert.equal(status, 413);
    assert.match(body.message, /larger than the upload limit of 1000 bytes/);
    await assertNothingStored();
  });

  it('answers 413 for a chunked upload without Content-Length that goes over the limit', async () => {
    const boundary = 'nestboxchunked';
    const head = `--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="stream.bin"\r\nContent-Type: application/octet-stream\r\n\r\n`;
    const chunks = [Buffer.from(head), ...Array.from({ length: 8 }, () => randomBytes(512)), Buffer.from(`\r\n--${boundary}--\r\n`)];
    const stream = new ReadableStream<Uint8Array>({
      async pull(controller) {
        const next = chunks.shift();
        if (next === undefined) controller.close();
        else {
          await new Promise((resolve) => setTimeout(resolve, 5));
          controller.enqueue(next);
        }
      },
    });
    const response = await server.fetch('/tasks/create/file', {
      method: 'POST',
      body: stream,
      headers: { 'content-type': `multipart/form-data; boundary=${boundary}` },
      duplex: 'half',
    } as RequestInit);
    assert.equal(response.status, 413);
    assert.match(((await response.json()) as { message: string }).message, /larger than the limit of 1000 bytes/);
    await assertNothingStored();
  });
});

describe('POST /tasks/create/file with authentication', () => {
  let server: TestServer;
  before(async () => {
    server = await startTestServer({ api: { token: 'secret-token' } });
  });
  after(() => server.close());

  it('needs the bearer token', async () => {
    const denied = await fetch(`${server.url}/tasks/create/file`, { method: 'POST', body: form({}, [['file', 'a.txt', 'x']]) });
    assert.equal(denied.status, 401);
    assert.match(((await denied.json()) as { message: string }).message, /Authorization: Bearer <TOKEN>/);
    assert.deepEqual(await server.ctx.stores.tasks.list(), []);
    const allowed = await upload(server, {}, 'a.txt', 'x');
    assert.equal(allowed.status, 200);
  });
});
