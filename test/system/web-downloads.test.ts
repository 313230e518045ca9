import assert from 'node:assert/strict';
import { execFileSync, spawnSync } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { form, startTestServer, type TestServer } from '../helpers/server.js';

const sha256 = (content: Uint8Array) => createHash('sha256').update(content).digest('hex');

/** Password-protected zip downloads and the archive preview, checked with Debian's unzip and 7-Zip. */
describe('web downloads as zip archives with the password infected', () => {
  let server: TestServer;
  let work: string;
  let taskId: number;
  const sample = Buffer.concat([Buffer.from('MZ fake sample '), randomBytes(200_000)]);
  const dropped = randomBytes(70_000);
  const dump = randomBytes(300_000);
  const pcap = randomBytes(5_000);

  before(async () => {
    server = await startTestServer();
    work = mkdtempSync(join(tmpdir(), 'nestbox-zip-'));
    const created = await server.json<{ task_id: number }>('/tasks/create/file', { method: 'POST', body: form({}, [['file', 'evil<script>.exe', sample]]) });
    assert.equal(created.status, 200);
    taskId = created.body.task_id;
    const folder = server.ctx.layout.analysis(taskId);
    folder.create();
    writeFileSync(join(folder.files, '0123456789abcdef_payload.bin'), dropped);
    writeFileSync(join(folder.files, 'fedcba9876543210_other.txt'), 'other file');
    writeFileSync(join(folder.memory, '1234.dmp'), dump);
    writeFileSync(folder.pcap, pcap);
  });
  after(async () => {
    await server?.close();
    rmSync(work, { recursive: true, force: true });
  });

  /** Downloads `path`, checks it is a zip, and returns the file it was saved to. */
  const download = async (path: string) => {
    const response = await server.fetch(path);
    assert.equal(response.status, 200, `${path}: ${response.status}`);
    assert.equal(response.headers.get('content-type'), 'application/zip');
    assert.match(response.headers.get('content-disposition') ?? '', /^attachment; filename="[A-Za-z0-9._-]+\.zip"$/);
    const body = Buffer.from(await response.arrayBuffer());
    assert.equal(body.subarray(0, 4).toString('latin1'), 'PK\x03\x04');
    const file = join(work, `${randomBytes(4).toString('hex')}.zip`);
    writeFileSync(file, body);
    return { file, body };
  };

  /** Extracts with `tool` and the password into a new folder; returns that folder's files and contents. */
  const extract = (zip: string, tool: '7z' | 'unzip', password: string) => {
    const into = mkdtempSync(join(work, 'x-'));
    const args = tool === '7z' ? ['x', `-p${password}`, `-o${into}`, '-y', zip] : ['-P', password, '-o', zip, '-d', into];
    const run = spawnSync(tool, args, { encoding: 'utf8' });
    const files = readdirSync(into);
    return { status: run.status, files, content: (name: string) => readFileSync(join(into, name)) };
  };

  const cases = () => [
    { path: `/ui/api/tasks/${taskId}/download/sample`, name: sha256(sample), content: sample },
    { path: `/ui/api/tasks/${taskId}/download/dropped/${sha256(dropped)}`, name: sha256(dropped), content: dropped },
    { path: `/ui/api/tasks/${taskId}/download/dropped/${sha256(dropped).toUpperCase()}`, name: sha256(dropped), content: dropped },
    { path: `/ui/api/tasks/${taskId}/download/memory/1234`, name: '1234.dmp', content: dump },
    { path: `/ui/api/tasks/${taskId}/download/pcap`, name: 'dump.pcap', content: pcap },
  ];

  it('gives archives that 7-Zip and unzip open with the password, holding the exact bytes', async () => {
    for (const { path, name, content } of cases()) {
      const { file, body } = await download(path);
      assert.equal(body.indexOf(content.subarray(0, 64)), -1, `${path}: the content is not in the clear`);
      for (const tool of ['7z', 'unzip'] as const) {
        const opened = extract(file, tool, 'infected');
        assert.equal(opened.status, 0, `${tool} ${path}`);
        assert.deepEqual(opened.files, [name], `${tool} ${path}`);
        assert.ok(opened.content(name).equals(content), `${tool} ${path}: the exact bytes`);
      }
    }
  });

  it('cannot be opened with another password', async () => {
    const { file } = await download(`/ui/api/tasks/${taskId}/download/sample`);
    for (const tool of ['7z', 'unzip'] as const) {
      const opened = extract(file, tool, 'wrong');
      assert.notEqual(opened.status, 0, tool);
      const leaked = opened.files.map(opened.content).filter((bytes) => bytes.equals(sample));
      assert.deepEqual(leaked, [], `${tool} wrote no correct content`);
    }
  });

  it('answers HEAD with the headers only', async () => {
    const response = await server.fetch(`/ui/api/tasks/${taskId}/download/pcap`, { method: 'HEAD' });
    assert.equal(response.status, 200);
    assert.equal(response.headers.get('content-type'), 'application/zip');
    assert.equal((await response.arrayBuffer()).byteLength, 0);
  });

  it('answers 404 with a message for what is not there, and never leaves the task folder', async () => {
    const folder = server.ctx.layout.analysis(taskId);
    // A link planted in the task's folders leads nowhere, by name or by its target's content.
    const outside = join(work, 'secret.txt');
    writeFileSync(outside, 'host secret');
    symlinkSync(outside, join(folder.memory, 'link.dmp'));
    symlinkSync(outside, join(folder.files, '1111111111111111_link'));
    const missing = [
      `/ui/api/tasks/${taskId}/download/dropped/${sha256(Buffer.from('nothing'))}`,
      `/ui/api/tasks/${taskId}/download/dropped/${sha256(Buffer.from('host secret'))}`,
      `/ui/api/tasks/${taskId}/download/memory/999`,
      `/ui/api/tasks/${taskId}/download/memory/link`,
      `/ui/api/tasks/${taskId + 1}/download/pcap`,
      `/ui/api/tasks/${taskId + 1}/download/sample`,
    ];
    for (const path of missing) {
      const answer = await server.json<{ message: string }>(path);
      assert.equal(answer.status, 404, path);
      assert.equal(typeof answer.body.message, 'string');
    }
    const refused = [`/ui/api/tasks/${taskId}/download/memory/..%2F..%2Fbinary`, `/ui/api/tasks/${taskId}/download/memory/..`, `/ui/api/tasks/${taskId}/download/dropped/..%2Fdump.pcap`];
    for (const path of refused) {
      const answer = await server.json<{ message: string }>(path);
      assert.ok(answer.status === 400 || answer.status === 404, `${path}: ${answer.status}`);
    }
  });

  it('has no sample to give for a URL task', async () => {
    const created = await server.json<{ task_id: number }>('/tasks/create/url', { method: 'POST', body: new URLSearchParams({ url: 'http://example.test/' }) });
    const answer = await server.json<{ message: string }>(`/ui/api/tasks/${created.body.task_id}/download/sample`);
    assert.equal(answer.status, 404);
    assert.equal(answer.body.message, 'The task has no sample file');
  });
});

describe('web archive preview', () => {
  let server: TestServer;
  let work: string;
  before(async () => {
    server = await startTestServer();
    work = mkdtempSync(join(tmpdir(), 'nestbox-preview-'));
  });
  after(async () => {
    await server?.close();
    rmSync(work, { recursive: true, force: true });
  });

  const preview = async (name: string, content: Uint8Array) => {
    const { csrf } = (await server.json<{ csrf: string }>('/ui/api/session')).body;
    return server.json<{ members?: Array<{ name: string; size: number; type: string; sha256: string }>; message?: string }>('/ui/api/archive/preview', {
      method: 'POST',
      headers: { 'x-nestbox-csrf': csrf },
      body: form({}, [['file', name, content]]),
    });
  };

  it('lists the files an archive would become, nested ones included, and stores nothing', async () => {
    const source = join(work, 'src');
    mkdirSync(join(source, 'dir'), { recursive: true });
    writeFileSync(join(source, 'run.sh'), '#!/bin/sh\necho hi\n');
    writeFileSync(join(source, 'dir', 'data.bin'), randomBytes(1000));
    execFileSync('tar', ['-cf', join(source, 'inner.tar'), '-C', source, 'run.sh']);
    execFileSync('7z', ['a', '-tzip', '-pinfected', join(work, 'outer.zip'), 'dir/data.bin', 'inner.tar'], { cwd: source, stdio: 'ignore' });
    const tmpBefore = readdirSync(server.ctx.layout.tmp).sort();
    const answer = await preview('outer.zip', readFileSync(join(work, 'outer.zip')));
    assert.equal(answer.status, 200, JSON.stringify(answer.body));
    const members = [...answer.body.members!].sort((a, b) => a.name.localeCompare(b.name));
    assert.deepEqual(members.map((member) => [member.name, member.size]), [
      ['dir/data.bin', 1000],
      ['inner.tar/run.sh', 18],
    ]);
    assert.match(members[1]!.type, /shell script/);
    assert.equal(members[0]!.sha256, sha256(readFileSync(join(source, 'dir', 'data.bin'))));
    assert.deepEqual(readdirSync(server.ctx.layout.tmp).sort(), tmpBefore, 'nothing left in tmppath');
    assert.deepEqual(await server.ctx.stores.tasks.list(), [], 'no task');
    assert.deepEqual(readdirSync(server.ctx.layout.binaries), [], 'no stored file');
  });

  it('refuses what is not an archive, or no file, with a 400', async () => {
    const plain = await preview('notes.txt', Buffer.from('just text\n'));
    assert.equal(plain.status, 400);
    assert.match(plain.body.message!, /^notes\.txt is not an archive/);
    const { csrf } = (await server.json<{ csrf: string }>('/ui/api/session')).body;
    const empty = await server.json<{ message: string }>('/ui/api/archive/preview', { method: 'POST', headers: { 'x-nestbox-csrf': csrf }, body: form({ a: 'b' }) });
    assert.equal(empty.status, 400);
  });
});
