import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, it } from 'node:test';
import { AnalysisUploads } from '../src/machinery/qemu/analysis-uploads.js';
import { UploadStream } from '../src/machinery/qemu/upload-stream.js';
import { AnalysisPaths } from '../src/storage/layout.js';

/** The guest's upload port, framed as the analyzer frames it, fed in arbitrary pieces. */
function frame(header: Record<string, unknown>, body: Buffer = Buffer.alloc(0)): Buffer {
  return Buffer.concat([Buffer.from(`${JSON.stringify({ ...header, size: body.length })}\n`), body]);
}

const END = Buffer.from('{"kind": "end"}\n');

function feedInPieces(stream: UploadStream, data: Buffer, piece: number): void {
  for (let offset = 0; offset < data.length; offset += piece) stream.push(data.subarray(offset, offset + piece));
}

describe('guest uploads into the analysis folder', () => {
  let paths: AnalysisPaths;
  const limits = { maxFiles: 10, maxFileBytes: 1024, maxTotalBytes: 4096 };

  beforeEach(() => {
    paths = new AnalysisPaths(mkdtempSync(join(tmpdir(), 'nestbox-uploads-')));
    paths.create();
  });

  afterEach(() => rmSync(paths.dir, { recursive: true, force: true }));

  it('names dropped files by content hash and process dumps by pid, whatever the chunking', async () => {
    for (const piece of [1, 7, 4096]) {
      rmSync(paths.dir, { recursive: true, force: true });
      paths.create();
      const uploads = new AnalysisUploads(paths, limits);
      const note = Buffer.from('secret\n');
      const dump = Buffer.alloc(300, 0xcc);
      const data = Buffer.concat([
        frame({ kind: 'dropped', path: '/tmp/drop/note.txt' }, note),
        frame({ kind: 'procmem', pid: 77 }, dump),
        frame({ kind: 'procmem', pid: 77 }, dump.subarray(0, 10)),
        frame({ kind: 'dropped', path: '/tmp/empty' }),
        END,
      ]);
      feedInPieces(new UploadStream(uploads), data, piece);
      await uploads.done;
      const sha = createHash('sha256').update(note).digest('hex');
      const emptySha = createHash('sha256').digest('hex');
      assert.deepEqual(uploads.entries, [
        { path: `files/${sha.slice(0, 16)}_note.txt`, filepath: '/tmp/drop/note.txt', pids: [] },
        { path: 'memory/77-1.dmp', filepath: null, pids: [77] },
        { path: 'memory/77-2.dmp', filepath: null, pids: [77] },
        { path: `files/${emptySha.slice(0, 16)}_empty`, filepath: '/tmp/empty', pids: [] },
      ]);
      assert.deepEqual(readFileSync(join(paths.dir, uploads.entries[0]!.path)), note);
      assert.deepEqual(readFileSync(join(paths.memory, '77-1.dmp')), dump);
      assert.equal(readFileSync(join(paths.memory, '77-2.dmp')).length, 10);
      assert.deepEqual(uploads.warnings, []);
    }
  });

  it('never lets the guest choose a host path', async () => {
    const uploads = new AnalysisUploads(paths, limits);
    feedInPieces(new UploadStream(uploads), Buffer.concat([frame({ kind: 'dropped', path: '/../../../etc/passwd' }, Buffer.from('x')), END]), 3);
    await uploads.done;
    assert.equal(uploads.entries.length, 1);
    assert.match(uploads.entries[0]!.path, /^files\/[0-9a-f]{16}_passwd$/);
    assert.deepEqual(readdirSync(paths.files), [uploads.entries[0]!.path.slice('files/'.length)]);
  });

  it('skips what is over the limits, warns, and stays in step with the stream', async () => {
    const uploads = new AnalysisUploads(paths, { maxFiles: 2, maxFileBytes: 100, maxTotalBytes: 150 });
    const data = Buffer.concat([
      frame({ kind: 'dropped', path: '/big' }, Buffer.alloc(101, 1)),
      frame({ kind: 'dropped', path: '/a' }, Buffer.alloc(80, 2)),
      frame({ kind: 'dropped', path: '/b' }, Buffer.alloc(80, 3)),
      frame({ kind: 'dropped', path: '/c' }, Buffer.alloc(10, 4)),
      frame({ kind: 'dropped', path: '/d' }, Buffer.alloc(10, 5)),
      END,
    ]);
    feedInPieces(new UploadStream(uploads), data, 13);
    await uploads.done;
    assert.deepEqual(uploads.entries.map((entry) => entry.filepath), ['/a', '/c']);
    assert.equal(uploads.warnings.length, 3);
    assert.match(uploads.warnings[0]!, /\/big not kept: 101 bytes is over the limit of 100/);
    assert.match(uploads.warnings[1]!, /\/b not kept: the uploads would pass 150 bytes/);
    assert.match(uploads.warnings[2]!, /\/d not kept: more than 2 uploads/);
  });

  it('stops reading at a malformed header and keeps what came before', async () => {
    const uploads = new AnalysisUploads(paths, limits);
    const data = Buffer.concat([
      frame({ kind: 'dropped', path: '/ok' }, Buffer.from('fine')),
      Buffer.from('{"kind": "dropped", "size": -5, "path": "/x"}\n'),
      frame({ kind: 'dropped', path: '/after' }, Buffer.from('never read')),
    ]);
    new UploadStream(uploads).push(data);
    await uploads.done;
    assert.deepEqual(uploads.entries.map((entry) => entry.filepath), ['/ok']);
    assert.match(uploads.warnings.join(), /malformed upload header/);
  });

  it('drops an upload cut short by the machine stopping, without leaving a partial file', () => {
    const uploads = new AnalysisUploads(paths, limits);
    const whole = frame({ kind: 'procmem', pid: 5 }, Buffer.alloc(500, 9));
    new UploadStream(uploads).push(whole.subarray(0, 200));
    uploads.abandon();
    assert.deepEqual(uploads.entries, []);
    assert.deepEqual(readdirSync(paths.memory), []);
    assert.match(uploads.warnings.join(), /memory dump of process 5 arrived incomplete/);
  });

  it('refuses an endless header line', async () => {
    const uploads = new AnalysisUploads(paths, limits);
    new UploadStream(uploads).push(Buffer.alloc(10_000, 0x61));
    await uploads.done;
    assert.match(uploads.warnings.join(), /header is too long/);
  });
});
