import assert from 'node:assert/strict';
import { createHash, randomBytes } from 'node:crypto';
import { execFileSync } from 'node:child_process';
import { createReadStream, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, it } from 'node:test';
import type { DroppedEntry } from '../../src/machinery/dropped/entry.js';
import { AnalysisUploads } from '../../src/machinery/qemu/analysis-uploads.js';
import { guestFile } from '../../src/machinery/qemu/guest-files.js';
import { UploadStream } from '../../src/machinery/qemu/upload-stream.js';
import { AnalysisPaths } from '../../src/storage/layout.js';

/** The guest's upload port, framed as the analyzer frames it, fed in arbitrary pieces. */
function frame(header: Record<string, unknown>, body: Buffer = Buffer.alloc(0)): Buffer {
  return Buffer.concat([Buffer.from(`${JSON.stringify({ ...header, size: body.length })}\n`), body]);
}

const END = Buffer.from('{"kind": "end"}\n');

/** The analyzer's dropped-file upload, run on a folder with its port written to a file instead of virtio-serial. */
const GUEST_UPLOADER = `
import json, sys, threading
sys.path.insert(0, sys.argv[1])
import analyzer
analyzer.DROPPED_ROOTS = [sys.argv[2]]
channels = analyzer.Channels.__new__(analyzer.Channels)
channels.files = open(sys.argv[3], "wb")
channels.lock = threading.Lock()
channels.say = print
analyzer.upload_dropped_files({"dropped_files": json.loads(sys.argv[4])}, channels, 0, set(), [tuple(capture) for capture in json.loads(sys.argv[5])])
channels.close()
`;

function feedInPieces(stream: UploadStream, data: Buffer, piece: number): void {
  for (let offset = 0; offset < data.length; offset += piece) stream.push(data.subarray(offset, offset + piece));
}

describe('guest uploads into the analysis folder', () => {
  let paths: AnalysisPaths;
  const limits = { maxFiles: 10, maxFileBytes: 1024, maxTotalBytes: 4096 };
  const dropped = { max_file_size: 1024, max_total_size: 4096, max_files: 10 };

  beforeEach(() => {
    paths = new AnalysisPaths(mkdtempSync(join(tmpdir(), 'nestbox-uploads-')));
    paths.create();
  });

  afterEach(() => rmSync(paths.dir, { recursive: true, force: true }));

  it('names dropped files by content hash and process dumps by pid, whatever the chunking', async () => {
    for (const piece of [1, 7, 4096]) {
      rmSync(paths.dir, { recursive: true, force: true });
      paths.create();
      const uploads = new AnalysisUploads(paths, limits, dropped);
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
        { path: `files/${sha.slice(0, 16)}_note.txt`, filepath: '/tmp/drop/note.txt', pids: [], size: note.length },
        { path: 'memory/77-1.dmp', filepath: null, pids: [77] },
        { path: 'memory/77-2.dmp', filepath: null, pids: [77] },
        { path: `files/${emptySha.slice(0, 16)}_empty`, filepath: '/tmp/empty', pids: [], size: 0 },
      ]);
      assert.deepEqual(readFileSync(join(paths.dir, uploads.entries[0]!.path)), note);
      assert.deepEqual(readFileSync(join(paths.memory, '77-1.dmp')), dump);
      assert.equal(readFileSync(join(paths.memory, '77-2.dmp')).length, 10);
      assert.deepEqual(uploads.warnings, []);
    }
  });

  it('never lets the guest choose a host path', async () => {
    const uploads = new AnalysisUploads(paths, limits, dropped);
    feedInPieces(new UploadStream(uploads), Buffer.concat([frame({ kind: 'dropped', path: '/../../../etc/passwd' }, Buffer.from('x')), END]), 3);
    await uploads.done;
    assert.equal(uploads.entries.length, 1);
    assert.match(uploads.entries[0]!.path!, /^files\/[0-9a-f]{16}_passwd$/);
    assert.deepEqual(readdirSync(paths.files), [uploads.entries[0]!.path!.slice('files/'.length)]);
  });

  it("skips process dumps over the machine's upload limits, warns, and stays in step with the stream", async () => {
    const uploads = new AnalysisUploads(paths, { maxFiles: 2, maxFileBytes: 100, maxTotalBytes: 150 }, dropped);
    const data = Buffer.concat([
      frame({ kind: 'procmem', pid: 1 }, Buffer.alloc(101, 1)),
      frame({ kind: 'procmem', pid: 2 }, Buffer.alloc(80, 2)),
      frame({ kind: 'procmem', pid: 3 }, Buffer.alloc(80, 3)),
      frame({ kind: 'procmem', pid: 4 }, Buffer.alloc(10, 4)),
      frame({ kind: 'procmem', pid: 5 }, Buffer.alloc(10, 5)),
      frame({ kind: 'dropped', path: '/after' }, Buffer.alloc(10, 6)),
      END,
    ]);
    feedInPieces(new UploadStream(uploads), data, 13);
    await uploads.done;
    assert.deepEqual(uploads.entries.map((entry) => entry.pids[0] ?? entry.filepath), [2, 4, '/after']);
    assert.equal(uploads.warnings.length, 3);
    assert.match(uploads.warnings[0]!, /process 1 not kept: 101 bytes is over the limit of 100/);
    assert.match(uploads.warnings[1]!, /process 3 not kept: the uploads would pass 150 bytes/);
    assert.match(uploads.warnings[2]!, /process 5 not kept: more than 2 uploads/);
  });

  it('holds dropped files to the dropped_files limits whatever the guest sends, keeping their first bytes', async () => {
    const uploads = new AnalysisUploads(paths, limits, { max_file_size: 100, max_total_size: 250, max_files: 4 });
    const filler = randomBytes(5000);
    const data = Buffer.concat([
      // A guest that ignores its copy of the limits: the whole 5000 bytes come, 100 are kept.
      frame({ kind: 'dropped', path: '/fill-a', file_size: 5000 }, filler),
      // One that follows them: it announces the real size and sends the first 100 bytes.
      frame({ kind: 'dropped', path: '/fill-b', file_size: 1 << 30 }, filler.subarray(0, 100)),
      // 50 bytes left in the task: 50 kept.
      frame({ kind: 'dropped', path: '/fill-c', file_size: 400 }, filler.subarray(0, 100)),
      // Nothing left: listed with its size, no content.
      frame({ kind: 'dropped', path: '/fill-d', file_size: 400 }),
      frame({ kind: 'dropped', path: '/past-the-count', file_size: 1 }, Buffer.from('x')),
      END,
    ]);
    feedInPieces(new UploadStream(uploads), data, 997);
    await uploads.done;
    const entries = uploads.entries as DroppedEntry[];
    assert.deepEqual(entries.map((entry) => [entry.filepath, entry.size, entry.kept_size]), [
      ['/fill-a', 5000, 100],
      ['/fill-b', 1 << 30, 100],
      ['/fill-c', 400, 50],
      ['/fill-d', 400, 0],
    ]);
    const head = (bytes: number) => createHash('sha256').update(filler.subarray(0, bytes)).digest('hex');
    assert.deepEqual(entries.map((entry) => entry.kept_sha256), [head(100), head(100), head(50), undefined]);
    assert.deepEqual(entries.map((entry) => entry.path), [
      `files/${head(100).slice(0, 16)}_fill-a`,
      `files/${head(100).slice(0, 16)}_fill-b`,
      `files/${head(50).slice(0, 16)}_fill-c`,
      null,
    ]);
    assert.deepEqual(readFileSync(join(paths.dir, entries[0]!.path!)), filler.subarray(0, 100));
    assert.deepEqual(readFileSync(join(paths.dir, entries[1]!.path!)), filler.subarray(0, 100));
    assert.deepEqual(readFileSync(join(paths.dir, entries[2]!.path!)), filler.subarray(0, 50));
    assert.match(entries[0]!.note!, /^truncated: only the first 100 of 5000 bytes were kept \(over the per-file limit/);
    assert.match(entries[2]!.note!, /the task's limit dropped_files\.max_total_size of 250 bytes was spent/);
    assert.match(entries[3]!.note!, /^content not kept/);
    assert.deepEqual(uploads.warnings, [
      '3 dropped files truncated (only their first bytes are stored; their report entries say so): /fill-a (5000 bytes, 100 kept), /fill-b (1073741824 bytes, 100 kept), /fill-c (400 bytes, 50 kept)',
      '1 dropped file listed with path and size only, no content kept (250 bytes per task): /fill-d (400 bytes, 0 kept)',
      '1 dropped file not listed: more than dropped_files.max_files (4)',
    ]);
  });

  it("takes the guest analyzer's own dropped uploads: smallest first, cut by its copy of the limits before they cross the link", async () => {
    const root = join(paths.dir, 'guest-disk');
    mkdirSync(root);
    const mid = randomBytes(800 * 1024);
    writeFileSync(join(root, 'small.txt'), 'a small note');
    writeFileSync(join(root, 'mid.bin'), mid);
    writeFileSync(join(root, 'fill'), randomBytes(4096));
    execFileSync('truncate', ['-s', '3M', join(root, 'fill')]);
    writeFileSync(join(root, 'extra'), 'x');
    execFileSync('truncate', ['-s', '4M', join(root, 'extra')]);
    execFileSync('mkfifo', [join(root, 'pipe')]);
    const droppedLimits = { max_file_size: 2 ** 20, max_total_size: 1.5 * 2 ** 20, max_files: 3 };
    const streamFile = join(paths.dir, 'upload-port');
    const said = execFileSync('python3', ['-c', GUEST_UPLOADER, guestFile('analyzer'), root, streamFile, JSON.stringify(droppedLimits), '[]'], { encoding: 'utf8', timeout: 30_000 });
    assert.match(said, /^1 more dropped files than dropped_files\.max_files \(3\): not listed$/m);
    const fillKept = droppedLimits.max_total_size - 12 - mid.length;
    const framing = statSync(streamFile).size - (12 + mid.length + fillKept);
    assert.ok(framing > 0 && framing < 1000, `only the kept bytes and three headers crossed (${framing} bytes of framing)`);

    // The host holds what came to the same limits.
    const uploads = new AnalysisUploads(paths, limits, droppedLimits);
    const stream = new UploadStream(uploads);
    for await (const chunk of createReadStream(streamFile, { highWaterMark: 64 * 1024 })) stream.push(chunk as Buffer);
    await uploads.done;
    const entries = uploads.entries as DroppedEntry[];
    const headHash = (file: string, bytes: number) => execFileSync('sh', ['-c', 'head -c "$1" "$2" | sha256sum', 'sh', String(bytes), file], { encoding: 'utf8' }).split(' ')[0];
    assert.deepEqual(entries.map((entry) => [entry.filepath, entry.size, entry.truncated ?? false]), [
      [join(root, 'small.txt'), 12, false],
      [join(root, 'mid.bin'), mid.length, false],
      [join(root, 'fill'), 3 * 2 ** 20, true],
    ]);
    assert.equal(entries[2]!.kept_size, fillKept);
    assert.equal(entries[2]!.kept_sha256, headHash(join(root, 'fill'), fillKept));
    assert.equal(statSync(join(paths.dir, entries[2]!.path!)).size, fillKept);
    assert.deepEqual(readFileSync(join(paths.dir, entries[1]!.path!)), mid);
  });

  it("lists the guest supervisor's copies at the path they ran from, among the dropped files, smallest first", async () => {
    const root = join(paths.dir, 'guest-disk');
    const captures = join(paths.dir, 'captured');
    mkdirSync(root);
    mkdirSync(captures);
    writeFileSync(join(root, 'written.txt'), 'written and kept');
    const payload = randomBytes(3000);
    writeFileSync(join(captures, '1.bin'), payload);
    const captured = [[payload.length, '/memfd:payload (deleted)', join(captures, '1.bin')]];
    const streamFile = join(paths.dir, 'upload-port');
    const droppedLimits = { ...dropped, max_file_size: 4096 };
    execFileSync('python3', ['-c', GUEST_UPLOADER, guestFile('analyzer'), root, streamFile, JSON.stringify(droppedLimits), JSON.stringify(captured)], { timeout: 30_000 });
    const uploads = new AnalysisUploads(paths, limits, droppedLimits);
    new UploadStream(uploads).push(readFileSync(streamFile));
    await uploads.done;
    const entries = uploads.entries as DroppedEntry[];
    assert.deepEqual(entries.map((entry) => [entry.filepath, entry.size]), [[join(root, 'written.txt'), 16], ['/memfd:payload (deleted)', 3000]]);
    assert.deepEqual(readFileSync(join(paths.dir, entries[1]!.path!)), payload);
  });

  it("keeps the guest supervisor's record as logs/supervisor.jsonl: known lines only, rebuilt from their checked fields, once", async () => {
    const uploads = new AnalysisUploads(paths, limits, dropped);
    const sha = 'ab'.repeat(32);
    const record = [
      { event: 'sleep', pid: 7, call: 'clock_nanosleep', seconds: 90, time: 1700000000, extra: '/run/nestbox/secret' },
      { event: 'capture', reason: 'exec', pid: 8, filepath: '/tmp/.x', size: 10, sha256: sha, file: '1.bin' },
      { event: 'capture', reason: 'exec', pid: 8, filepath: '/tmp/.y', size: 10, sha256: 'not a hash' },
      { event: 'sleep', pid: -1, call: 'nanosleep', seconds: 20, time: 1 },
      { event: 'sleep', pid: 3, call: 'Bad Name', seconds: 20, time: 1 },
      { event: 'unrecorded', pid: 7, call: 'nanosleep', count: 300, extra: 'x' },
      { event: 'unrecorded', pid: 0, call: '', count: 4 },
      { event: 'unrecorded', pid: 7, call: 'nanosleep', count: 0 },
      { event: 'unrecorded', pid: 7, call: 'nanosleep', count: 1.5 },
      // Not a kind of line, whatever the prototype of an object holds.
      { event: 'constructor', pid: 7 },
      { event: '__proto__', pid: 7 },
    ].map((line) => JSON.stringify(line)).join('\n');
    const body = Buffer.from(`${record}\nnot json\n`);
    new UploadStream(uploads).push(Buffer.concat([frame({ kind: 'supervisor' }, body), frame({ kind: 'supervisor' }, body), END]));
    await uploads.done;
    assert.deepEqual(readFileSync(paths.supervisorLog, 'utf8').split('\n').filter(Boolean).map((line) => JSON.parse(line)), [
      { event: 'sleep', pid: 7, call: 'clock_nanosleep', seconds: 90, time: 1700000000 },
      { event: 'capture', reason: 'exec', pid: 8, filepath: '/tmp/.x', size: 10, sha256: sha },
      { event: 'unrecorded', pid: 7, call: 'nanosleep', count: 300 },
      { event: 'unrecorded', pid: 0, call: '', count: 4 },
    ]);
    assert.deepEqual(uploads.entries, []);
    assert.match(uploads.warnings.join(), /the supervisor's record of \d+ bytes not kept: one of at most/);
    assert.deepEqual(readdirSync(paths.logs).sort(), ['supervisor.jsonl']);
  });

  it('stops reading at a malformed header and keeps what came before', async () => {
    const uploads = new AnalysisUploads(paths, limits, dropped);
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
    const uploads = new AnalysisUploads(paths, limits, dropped);
    const whole = frame({ kind: 'procmem', pid: 5 }, Buffer.alloc(500, 9));
    new UploadStream(uploads).push(whole.subarray(0, 200));
    uploads.abandon();
    assert.deepEqual(uploads.entries, []);
    assert.deepEqual(readdirSync(paths.memory), []);
    assert.match(uploads.warnings.join(), /memory dump of process 5 arrived incomplete/);
  });

  it('refuses an endless header line', async () => {
    const uploads = new AnalysisUploads(paths, limits, dropped);
    new UploadStream(uploads).push(Buffer.alloc(10_000, 0x61));
    await uploads.done;
    assert.match(uploads.warnings.join(), /header is too long/);
  });
});
