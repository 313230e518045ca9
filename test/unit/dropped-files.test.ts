import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdirSync, mkdtempSync, readdirSync, rmSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { configSchema } from '../../src/config/schema.js';
import type { DroppedFileLimits } from '../../src/machinery/dropped/budget.js';
import type { DroppedEntry } from '../../src/machinery/dropped/entry.js';
import { droppedFileWarnings } from '../../src/machinery/dropped/warnings.js';
import { collectDroppedFiles, snapshotUpper } from '../../src/machinery/linux/dropped-files.js';

/**
 * The linux machine's dropped-file collector on a real folder standing for the overlay's upper layer:
 * sparse fill files, many small files, and the `dropped_files` limits. Hashes and sizes are checked with
 * coreutils (head, sha256sum, du), not with the code under test.
 */

const root = mkdtempSync(join(tmpdir(), 'nestbox-dropped-'));
after(() => rmSync(root, { recursive: true, force: true }));
let folders = 0;

function newTask(): { upper: string; filesDir: string; dir: string } {
  const dir = join(root, `task-${++folders}`);
  const upper = join(dir, 'upper');
  mkdirSync(upper, { recursive: true });
  return { upper, filesDir: join(dir, 'files'), dir };
}

function write(upper: string, machinePath: string, content: Buffer | string): void {
  mkdirSync(join(upper, machinePath, '..'), { recursive: true });
  writeFileSync(join(upper, machinePath), content);
}

/** A file of `size` bytes that starts with `head` and is a hole after it, as `truncate -s` makes. */
function sparse(upper: string, machinePath: string, head: Buffer, size: number): void {
  write(upper, machinePath, head);
  execFileSync('truncate', ['-s', String(size), join(upper, machinePath)]);
}

/** SHA-256 of a file's first `bytes` bytes, by coreutils. */
function headSha256(path: string, bytes: number): string {
  return execFileSync('sh', ['-c', 'head -c "$1" "$2" | sha256sum', 'sh', String(bytes), path], { encoding: 'utf8' }).split(' ')[0]!;
}

function byPath(entries: DroppedEntry[]): Map<string, DroppedEntry> {
  return new Map(entries.map((entry) => [entry.filepath, entry]));
}

function collect(task: { upper: string; filesDir: string }, limits: DroppedFileLimits, baseline = new Map<string, string>(), exclude = new Set<string>()) {
  return collectDroppedFiles({ upper: task.upper, filesDir: task.filesDir, baseline, exclude, limits });
}

const defaults = configSchema.parse({}).dropped_files;

describe('dropped files: per-file and per-task limits', () => {
  it('keeps the first 50 MiB of a 510 MiB fill file by default, says so, and hashes what it kept', async () => {
    assert.deepEqual(defaults, { max_file_size: 50 * 2 ** 20, max_total_size: 200 * 2 ** 20, max_files: 1000 });
    const task = newTask();
    const fill = join(task.upper, 'tmp/fill');
    sparse(task.upper, '/tmp/fill', randomBytes(4096), 510 * 2 ** 20);
    write(task.upper, '/tmp/payload.sh', '#!/bin/sh\necho payload\n');
    const { entries, unlisted } = await collect(task, defaults);
    assert.equal(unlisted, 0);
    const found = byPath(entries);
    const entry = found.get('/tmp/fill')!;
    const kept = 50 * 2 ** 20;
    assert.equal(entry.size, 510 * 2 ** 20);
    assert.equal(entry.truncated, true);
    assert.equal(entry.kept_size, kept);
    assert.equal(entry.kept_sha256, headSha256(fill, kept));
    assert.match(entry.note!, /^truncated: only the first 52428800 of 534773760 bytes were kept \(over the per-file limit dropped_files\.max_file_size of 52428800 bytes\); the stored file, its size and its hashes are of those bytes only$/);
    const stored = join(task.dir, entry.path!);
    assert.equal(statSync(stored).size, kept);
    assert.equal(headSha256(stored, kept + 1), entry.kept_sha256, 'the stored file is exactly the kept bytes');
    assert.equal(entry.path, `files/${entry.kept_sha256!.slice(0, 16)}_fill`);
    // A whole file's line is Cuckoo's, with its size.
    assert.deepEqual(found.get('/tmp/payload.sh'), { path: found.get('/tmp/payload.sh')!.path, filepath: '/tmp/payload.sh', pids: [], size: 23 });
    assert.deepEqual(readdirSync(task.filesDir).sort(), [entry.path!.slice(6), found.get('/tmp/payload.sh')!.path!.slice(6)].sort());
  });

  it('spends the task budget on the smallest files first, then truncates, then lists without content, then only counts', async () => {
    const task = newTask();
    const limits = { max_file_size: 4096, max_total_size: 8192, max_files: 7 };
    const small = ['/a/one', '/a/two', '/z/three'].map((path) => ({ path, content: randomBytes(500) }));
    for (const file of small) write(task.upper, file.path, file.content);
    write(task.upper, '/empty', '');
    sparse(task.upper, '/big/a', randomBytes(100), 5000);
    sparse(task.upper, '/big/b', randomBytes(100), 6000);
    sparse(task.upper, '/big/c', randomBytes(100), 7000);
    sparse(task.upper, '/big/d', randomBytes(100), 8000);
    sparse(task.upper, '/big/e', randomBytes(100), 9000);
    symlinkSync('/etc/passwd', join(task.upper, 'link'));
    const { entries, unlisted } = await collect(task, limits);
    assert.deepEqual(entries.map((entry) => entry.filepath), ['/empty', '/a/one', '/a/two', '/z/three', '/big/a', '/big/b', '/big/c']);
    assert.equal(unlisted, 2, '/big/d and /big/e are past max_files');
    const found = byPath(entries);
    for (const path of ['/empty', ...small.map((file) => file.path)]) {
      const entry = found.get(path)!;
      assert.equal(entry.truncated, undefined, path);
      assert.equal(statSync(join(task.dir, entry.path!)).size, entry.size, path);
    }
    // 1500 bytes spent: /big/a is cut by the per-file limit, /big/b by what the task has left.
    const a = found.get('/big/a')!;
    assert.deepEqual([a.size, a.kept_size, a.kept_sha256], [5000, 4096, headSha256(join(task.upper, 'big/a'), 4096)]);
    assert.match(a.note!, /per-file limit dropped_files\.max_file_size of 4096 bytes/);
    const b = found.get('/big/b')!;
    assert.deepEqual([b.size, b.kept_size, b.kept_sha256], [6000, 8192 - 1500 - 4096, headSha256(join(task.upper, 'big/b'), 2596)]);
    assert.match(b.note!, /^truncated: only the first 2596 of 6000 bytes were kept \(the task's limit dropped_files\.max_total_size of 8192 bytes was spent\)/);
    assert.equal(statSync(join(task.dir, b.path!)).size, 2596);
    const c = found.get('/big/c')!;
    assert.deepEqual(c, {
      path: null,
      filepath: '/big/c',
      pids: [],
      size: 7000,
      truncated: true,
      kept_size: 0,
      note: "content not kept (the task's limit dropped_files.max_total_size of 8192 bytes was spent): only the path and size are recorded",
    });
    const storedBytes = readdirSync(task.filesDir).reduce((sum, name) => sum + statSync(join(task.filesDir, name)).size, 0);
    assert.equal(storedBytes, 8192, 'the whole budget and no more');
    assert.equal(readdirSync(task.filesDir).length, 6, 'no temporary copy is left, nothing is stored for /big/c');
    assert.deepEqual(droppedFileWarnings(entries, unlisted, limits), [
      '2 dropped files truncated (only their first bytes are stored; their report entries say so): /big/a (5000 bytes, 4096 kept), /big/b (6000 bytes, 2596 kept)',
      '1 dropped file listed with path and size only, no content kept (8192 bytes per task): /big/c (7000 bytes, 0 kept)',
      '2 dropped files not listed: more than dropped_files.max_files (7)',
    ]);
  });

  it('lists at most max_files of many files and leaves out the files that were there before, unless changed', async () => {
    const task = newTask();
    write(task.upper, '/etc/resolv.conf', 'nameserver 10.0.0.1\n');
    write(task.upper, '/etc/hosts', '127.0.0.1 localhost\n');
    write(task.upper, '/run/trace.log', 'ours');
    const baseline = await snapshotUpper(task.upper);
    write(task.upper, '/etc/hosts', '#');
    for (let index = 0; index < 1500; index++) write(task.upper, `/tmp/many/${String(index).padStart(4, '0')}`, `file ${index}\n`);
    const { entries, unlisted } = await collect(task, defaults, baseline, new Set(['/run/trace.log']));
    assert.equal(entries.length, 1000);
    const paths = entries.map((entry) => entry.filepath);
    assert.equal(paths[0], '/etc/hosts', 'changed by the sample, and the smallest');
    assert.ok(!paths.includes('/etc/resolv.conf') && !paths.includes('/run/trace.log'));
    assert.ok(entries.every((entry) => !entry.truncated && entry.path !== null));
    // Then "file N\n": 7 bytes for N < 10, 8 below 100, 9 below 1000, 10 for the rest, which are past the count.
    assert.equal(paths[1], '/tmp/many/0000');
    assert.equal(paths.at(-1), '/tmp/many/0998');
    assert.equal(Math.max(...entries.map((entry) => entry.size)), 9);
    assert.equal(unlisted, 501, '/tmp/many/0999 and the 500 files of 10 bytes');
    assert.equal(readdirSync(task.filesDir).length, 1000);
  });
});

describe('dropped files: copies the supervisor made of executed and deleted files', () => {
  /** A capture as the supervisor leaves it: the first `kept` bytes of a file of `size` bytes. */
  function captured(dir: string, name: string, filepath: string, content: Buffer, size = content.length) {
    const hostPath = join(dir, name);
    writeFileSync(hostPath, content);
    const sha256 = execFileSync('sha256sum', [hostPath], { encoding: 'utf8' }).split(' ')[0]!;
    return { reason: 'exec' as const, pid: 7, filepath, hostPath, size, kept: content.length, sha256 };
  }

  it('lists a capture at the path it ran from, once when the same content is still there at the end', async () => {
    const task = newTask();
    mkdirSync(join(task.dir, 'captured'));
    const payload = randomBytes(3000);
    write(task.upper, '/tmp/stays', payload);
    const gone = captured(join(task.dir, 'captured'), '1.bin', '/tmp/.gone', randomBytes(100));
    const stays = captured(join(task.dir, 'captured'), '2.bin', '/tmp/stays', payload);
    const changedSince = captured(join(task.dir, 'captured'), '3.bin', '/tmp/stays', randomBytes(50));
    const { entries } = await collectDroppedFiles({ ...task, baseline: new Map(), exclude: new Set(), limits: defaults, captured: [gone, stays, changedSince] });
    assert.deepEqual(entries.map((entry) => entry.filepath).sort(), ['/tmp/.gone', '/tmp/stays', '/tmp/stays']);
    const stored = entries.map((entry) => headSha256(join(task.dir, entry.path!), Number.MAX_SAFE_INTEGER)).sort();
    assert.deepEqual(stored, [gone.sha256, stays.sha256, changedSince.sha256].sort());
  });

  it('says a capture the supervisor cut holds only its first bytes', async () => {
    const task = newTask();
    mkdirSync(join(task.dir, 'captured'));
    const cut = captured(join(task.dir, 'captured'), '1.bin', '/memfd:payload (deleted)', randomBytes(1000), 5000);
    const { entries } = await collectDroppedFiles({ ...task, baseline: new Map(), exclude: new Set(), limits: defaults, captured: [cut] });
    assert.equal(entries.length, 1);
    assert.equal(entries[0]!.size, 5000);
    assert.equal(entries[0]!.kept_size, 1000);
    assert.equal(entries[0]!.truncated, true);
  });
});
