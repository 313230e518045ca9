import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { SealCheck } from '../../src/cluster/transfer/receive-results.js';
import { isNestboxError } from '../../src/errors.js';
import { extractTar, memberSteps, paxFields } from '../../src/storage/tar-extract.js';
import { tarFolder } from '../../src/storage/tar-stream.js';
import { chunked, collect, handTar, sha256, tarHeader } from '../helpers/tar-archive.js';

/** The checks a main node makes on a results archive from a worker before it keeps anything of it. */

const LIMITS = { maxBytes: 10 * 1024 * 1024, maxEntries: 1000 };

describe('results archive: tar extraction', () => {
  let work: string;
  let source: string;
  let archive: Buffer;
  let count = 0;
  const freshRoot = () => {
    const root = join(work, `out${count++}`, 'root');
    mkdirSync(root, { recursive: true });
    return root;
  };
  const refusal = (kind: 'invalid_input' | 'too_large', pattern: RegExp) => (error: unknown) =>
    isNestboxError(error, kind) && pattern.test(error.message);

  before(async () => {
    work = mkdtempSync(join(tmpdir(), 'nestbox-tar-extract-'));
    source = join(work, 'task');
    mkdirSync(join(source, 'reports'), { recursive: true });
    mkdirSync(join(source, 'shots'));
    mkdirSync(join(source, 'files', 'a'.repeat(90), 'b'.repeat(90)), { recursive: true });
    writeFileSync(join(source, 'reports', 'report.json'), JSON.stringify({ info: { id: 7 } }));
    writeFileSync(join(source, 'dump.pcap'), Buffer.alloc(70_000, 7));
    writeFileSync(join(source, 'files', 'a'.repeat(90), 'b'.repeat(90), 'long-named-dropped-file.bin'), 'dropped');
    writeFileSync(join(source, 'empty'), '');
    writeFileSync(join(work, 'sample'), 'MZ sample');
    symlinkSync(join(work, 'sample'), join(source, 'binary'));
    archive = await collect(await tarFolder(source, { compression: 'none', includeTopLevel: (name) => name !== 'binary' }));
  });
  after(() => rmSync(work, { recursive: true, force: true }));

  it('unpacks a task folder tarred by the system tar, long names included, in chunks of any size', async () => {
    for (const size of [100, 511, 513, 65536]) {
      const root = freshRoot();
      const extracted = await extractTar(chunked(archive, size), root, LIMITS);
      assert.deepEqual(extracted, { files: 4, folders: 5, bytes: 70_000 + 17 + 7 });
      assert.equal(readFileSync(join(root, 'reports', 'report.json'), 'utf8'), '{"info":{"id":7}}');
      assert.deepEqual(readFileSync(join(root, 'dump.pcap')), Buffer.alloc(70_000, 7));
      assert.equal(readFileSync(join(root, 'files', 'a'.repeat(90), 'b'.repeat(90), 'long-named-dropped-file.bin'), 'utf8'), 'dropped');
      assert.equal(readFileSync(join(root, 'empty'), 'utf8'), '');
      assert.ok(!existsSync(join(root, 'binary')), 'the binary link is left to the receiver');
    }
  });

  it('reads pax headers for long paths', async () => {
    const paxArchive = execFileSync('tar', ['-c', '--format=pax', '-f', '-', '-C', source, 'files']);
    const root = freshRoot();
    await extractTar(chunked(paxArchive, 4096), root, LIMITS);
    assert.equal(readFileSync(join(root, 'files', 'a'.repeat(90), 'b'.repeat(90), 'long-named-dropped-file.bin'), 'utf8'), 'dropped');
    assert.deepEqual(paxFields(Buffer.from('19 path=some/where\n10 size=5\n')), { path: 'some/where', size: 5 });
  });

  it('refuses members that would leave the folder, and writes nothing outside it', async () => {
    for (const name of ['../escape', 'reports/../../escape', '/tmp/escape']) {
      const root = freshRoot();
      await assert.rejects(extractTar(chunked(handTar([{ name, content: 'x' }]), 512), root, LIMITS), refusal('invalid_input', /absolute|outside/));
      assert.deepEqual(readdirSync(join(root, '..')), ['root']);
      assert.deepEqual(readdirSync(root), []);
    }
    assert.deepEqual(memberSteps('./reports//report.json'), ['reports', 'report.json']);
  });

  it('refuses links, devices and fifos, whatever they point to', async () => {
    const cases: Array<[string, RegExp]> = [['2', /symbolic link/], ['1', /hard link/], ['3', /device/], ['6', /fifo/]];
    for (const [type, pattern] of cases) {
      const root = freshRoot();
      const tar = handTar([{ name: 'shots', type: '5' }, { name: 'shots/link', type, linkName: '/etc/passwd' }, { name: 'shots/link/x', content: 'x' }]);
      await assert.rejects(extractTar(chunked(tar, 1000), root, LIMITS), refusal('invalid_input', pattern));
      assert.deepEqual(readdirSync(join(root, 'shots')), []);
    }
  });

  it('refuses an archive cut off anywhere, even between two members', async () => {
    for (const cut of [100, 512, 1024 + 300, archive.length - 10_241, archive.indexOf(Buffer.alloc(1024)) - 1]) {
      await assert.rejects(extractTar(chunked(archive.subarray(0, cut), 700), freshRoot(), LIMITS), refusal('invalid_input', /cut off/), `cut at ${cut}`);
    }
    const twoMembers = handTar([{ name: 'a', content: 'a' }, { name: 'b', content: 'b' }]);
    await assert.rejects(extractTar(chunked(twoMembers.subarray(0, 1024), 512), freshRoot(), LIMITS), refusal('invalid_input', /end-of-archive/));
  });

  it('refuses damaged headers, data after the end, and members named twice', async () => {
    const damaged = Buffer.from(handTar([{ name: 'a', content: 'a' }]));
    damaged[5] = 0x41;
    await assert.rejects(extractTar(chunked(damaged, 512), freshRoot(), LIMITS), refusal('invalid_input', /checksum/));
    const trailing = Buffer.concat([handTar([{ name: 'a', content: 'a' }]), tarHeader('b', '0', 0)]);
    await assert.rejects(extractTar(chunked(trailing, 512), freshRoot(), LIMITS), refusal('invalid_input', /after its end-of-archive/));
    const twice = handTar([{ name: 'a', content: 'a' }, { name: 'a', content: 'b' }]);
    await assert.rejects(extractTar(chunked(twice, 512), freshRoot(), LIMITS), refusal('invalid_input', /twice/));
  });

  it('refuses archives over the byte or entry limits', async () => {
    await assert.rejects(extractTar(chunked(archive, 4096), freshRoot(), { maxBytes: 69_999, maxEntries: 1000 }), refusal('too_large', /results_limit/));
    await assert.rejects(extractTar(chunked(archive, 4096), freshRoot(), { maxBytes: LIMITS.maxBytes, maxEntries: 5 }), refusal('too_large', /results_max_entries/));
  });
});

describe('results archive: the seal (length and sha256 announced by the worker)', () => {
  const data = Buffer.from('the archive bytes');
  const pass = async (check: SealCheck, bytes: Buffer) => collect(check.pass(chunked(bytes, 4)));

  it('accepts exactly the announced bytes', async () => {
    const check = new SealCheck({ length: data.length, sha256: sha256(data) });
    assert.deepEqual(await pass(check, data), data);
    check.verify();
  });

  it('refuses fewer bytes, more bytes, or other bytes', async () => {
    const short = new SealCheck({ length: data.length, sha256: sha256(data) });
    await pass(short, data.subarray(0, 5));
    assert.throws(() => short.verify(), /ended after 5 of the 17 bytes/);
    const long = new SealCheck({ length: 5, sha256: sha256(data) });
    await assert.rejects(pass(long, data), /longer than the 5 bytes announced/);
    const other = new SealCheck({ length: data.length, sha256: sha256('something else') });
    await pass(other, data);
    assert.throws(() => other.verify(), /sha256/);
  });
});
