import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { mkdirSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { NewTask } from '../../src/db/schema.js';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { taskRow } from '../helpers/tasks.js';

const CONTENT = 'MZ this is the sample';
const hash = (algorithm: string) => createHash(algorithm).update(CONTENT).digest('hex');
const SHA256 = hash('sha256');
const MD5 = hash('md5');

function taskFields(overrides: Partial<NewTask>): NewTask {
  return taskRow({ status: 'reported', ...overrides });
}

describe('memory, pcap and file downloads', () => {
  let server: TestServer;
  let sampleId: number;
  let taskIds: number[];

  before(async () => {
    server = await startTestServer();
    const { ctx } = server;
    sampleId = await ctx.stores.samples.upsert({
      file_size: CONTENT.length,
      file_type: 'data',
      md5: MD5,
      crc32: '12345678',
      sha1: hash('sha1'),
      sha256: SHA256,
      sha512: hash('sha512'),
      ssdeep: null,
    });
    // Inserted out of order on purpose: `tasks` must come back sorted.
    taskIds = [];
    for (let i = 0; i < 3; i++) taskIds.push(await ctx.stores.tasks.insert(taskFields({ sample_id: sampleId })));
    await ctx.stores.tasks.insert(taskFields({ category: 'url', target: 'http://example.test/' }));
    writeFileSync(ctx.layout.binary(SHA256), CONTENT);

    const paths = ctx.layout.analysis(taskIds[0]!);
    paths.create();
    writeFileSync(paths.pcap, 'PCAPDATA');
    writeFileSync(join(paths.memory, '2500-1.dmp'), 'DUMP-2500-1');
    writeFileSync(join(paths.memory, 'block-2500-0x1000-1.dmp'), 'BLOCK');
    writeFileSync(join(paths.memory, '2500-abcdef0123456789.exe_'), 'CARVED');
    mkdirSync(join(paths.memory, 'nested'));
    writeFileSync(join(paths.memory, 'nested', '77-1.dmp'), 'NESTED');
    writeFileSync(paths.memoryDump, 'WHOLE MACHINE');
    // Links are never followed by downloads, even inside the analysis folder.
    symlinkSync(ctx.layout.binary(SHA256), join(paths.memory, 'link-1.dmp'));
    server.ctx.layout.analysis(taskIds[1]!).create();
  });
  after(() => server.close());

  it('lists memory dumps recursively, without .dmp, and without the whole-machine dump', async () => {
    const { status, body } = await server.json(`/memory/list/${taskIds[0]}`);
    assert.equal(status, 200);
    assert.deepEqual(body, { dump_files: ['2500-1', '2500-abcdef0123456789.exe_', '77-1', 'block-2500-0x1000-1'] });
  });

  it('answers 404 "Memory dump not found" for an empty or missing memory folder', async () => {
    for (const id of [taskIds[1], taskIds[2], 9999]) {
      const { status, body } = await server.json(`/memory/list/${id}`);
      assert.equal(status, 404);
      assert.deepEqual(body, { message: 'Memory dump not found' });
    }
  });

  it('serves one dump by its stem as an octet stream', async () => {
    const response = await server.fetch(`/memory/get/${taskIds[0]}/2500-1`);
    assert.equal(response.status, 200);
    assert.equal(response.headers.get('content-type'), 'application/octet-stream; charset=UTF-8');
    assert.equal(response.headers.get('content-length'), '11');
    assert.equal(await response.text(), 'DUMP-2500-1');
  });

  it('answers 404 for a pid that is not a dump stem, a nested dump, a link, or a missing task', async () => {
    for (const path of [`/memory/get/${taskIds[0]}/2500`, `/memory/get/${taskIds[0]}/2500-1.dmp`, `/memory/get/${taskIds[0]}/77-1`, `/memory/get/${taskIds[0]}/link-1`, '/memory/get/9999/2500-1']) {
      const { status, body } = await server.json(path);
      assert.equal(status, 404, path);
      assert.deepEqual(body, { message: 'Memory dump not found' });
    }
  });

  it('has no /v1 alias for the memory routes', async () => {
    assert.equal((await server.fetch(`/v1/memory/list/${taskIds[0]}`)).status, 404);
    assert.equal((await server.fetch(`/v1/memory/get/${taskIds[0]}/2500-1`)).status, 404);
  });

  it('serves the capture, under /v1 too, and 404 "File not found" without one', async () => {
    for (const prefix of ['', '/v1']) {
      const response = await server.fetch(`${prefix}/pcap/get/${taskIds[0]}`);
      assert.equal(response.status, 200);
      assert.equal(response.headers.get('content-type'), 'application/octet-stream; charset=UTF-8');
      assert.equal(await response.text(), 'PCAPDATA');
    }
    for (const id of [taskIds[1], 9999]) {
      const { status, body } = await server.json(`/pcap/get/${id}`);
      assert.equal(status, 404);
      assert.deepEqual(body, { message: 'File not found' });
    }
  });

  it('shows a sample by md5, sha256 or id with the sorted ids of its tasks', async () => {
    const expected = {
      sample: {
        crc32: '12345678',
        file_size: CONTENT.length,
        file_type: 'data',
        id: sampleId,
        md5: MD5,
        sha1: hash('sha1'),
        sha256: SHA256,
        sha512: hash('sha512'),
        ssdeep: null,
        tasks: taskIds,
      },
    };
    for (const path of [`/files/view/md5/${MD5}`, `/files/view/sha256/${SHA256}`, `/files/view/id/${sampleId}`, `/v1/files/view/md5/${MD5.toUpperCase()}`, `/v1/files/view/sha256/${SHA256}`, `/v1/files/view/id/${sampleId}`]) {
      const { status, body } = await server.json(path);
      assert.equal(status, 200, path);
      assert.deepEqual(body, expected);
    }
  });

  it('answers 404 "File not found" for a well-formed lookup that matches nothing', async () => {
    for (const path of [`/files/view/md5/${'0'.repeat(32)}`, `/files/view/sha256/${'f'.repeat(64)}`, '/files/view/id/9999']) {
      const { status, body } = await server.json(path);
      assert.equal(status, 404, path);
      assert.deepEqual(body, { message: 'File not found' });
    }
  });

  it('answers 400 "Invalid lookup term" for malformed hashes and id 0', async () => {
    const paths = [
      `/files/view/md5/${MD5.slice(1)}`,
      `/files/view/md5/${MD5}0`,
      `/files/view/md5/${'g'.repeat(32)}`,
      `/files/view/sha256/${MD5}`,
      `/files/view/sha256/${SHA256.slice(0, 63)}z`,
      '/files/view/id/0',
      '/files/view/id/000',
    ];
    for (const path of paths) {
      const { status, body } = await server.json(path);
      assert.equal(status, 400, path);
      assert.deepEqual(body, { message: 'Invalid lookup term' });
    }
    assert.equal((await server.fetch('/files/view/id/abc')).status, 404);
  });

  it('serves a stored sample by sha256, under /v1 too', async () => {
    for (const path of [`/files/get/${SHA256}`, `/v1/files/get/${SHA256.toUpperCase()}`]) {
      const response = await server.fetch(path);
      assert.equal(response.status, 200, path);
      assert.equal(response.headers.get('content-type'), 'application/octet-stream; charset=UTF-8');
      assert.equal(await response.text(), CONTENT);
    }
    const head = await server.fetch(`/files/get/${SHA256}`, { method: 'HEAD' });
    assert.equal(head.status, 200);
    assert.equal(head.headers.get('content-length'), String(CONTENT.length));
    assert.equal(await head.text(), '');
  });

  it('answers 404 for a sample that is not stored and 400 for a malformed sha256', async () => {
    const missing = await server.json(`/files/get/${'e'.repeat(64)}`);
    assert.equal(missing.status, 404);
    assert.deepEqual(missing.body, { message: 'File not found' });
    for (const value of [MD5, 'x'.repeat(64), `${SHA256}0`]) {
      const { status, body } = await server.json(`/files/get/${value}`);
      assert.equal(status, 400);
      assert.deepEqual(body, { message: 'Invalid lookup term' });
    }
  });
});
