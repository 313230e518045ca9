import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, symlinkSync, linkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { after, before, beforeEach, describe, it } from 'node:test';
import { isNestboxError } from '../../src/errors.js';
import { type ArchiveKind, type ArchiveLimits, archiveKindOf, safeEntryName, unpackArchive } from '../../src/storage/archives.js';
import { FileTypeDetector } from '../../src/storage/filetype.js';

const sha256 = (data: Uint8Array) => createHash('sha256').update(data).digest('hex');
const sh = (cmd: string, args: string[], cwd: string) => execFileSync(cmd, args, { cwd, stdio: ['ignore', 'pipe', 'pipe'] });

describe('archives', () => {
  let root: string;
  let src: string;
  let work: string;
  const detector = new FileTypeDetector();
  const detect = (path: string) => detector.detect(path);
  const limits: ArchiveLimits = { passwords: ['infected', 'malware'], maxDepth: 3, maxTotalSize: 1024 * 1024, maxFiles: 20 };
  const payload = { 'a.txt': Buffer.from('hello\n'), 'sub/b.bin': randomBytes(5000), 'sub/deeper/c.exe': randomBytes(70_000) };

  async function unpack(file: string, overrides: Partial<ArchiveLimits> = {}) {
    const type = await detect(file);
    const kind = archiveKindOf(type);
    assert.ok(kind, `${file} is an archive (${type})`);
    return unpackArchive({ path: file, name: relative(src, file), kind: kind as ArchiveKind }, work, { ...limits, ...overrides }, detect);
  }

  /** Every file under the work folder, relative to it. */
  const workFiles = (): string[] => readdirSync(work, { recursive: true, withFileTypes: true })
    .filter((entry) => !entry.isDirectory())
    .map((entry) => relative(work, join(entry.parentPath, entry.name)));

  function assertPayload(files: Awaited<ReturnType<typeof unpack>>) {
    assert.deepEqual(files.map((f) => f.baseName).sort(), ['a.txt', 'b.bin', 'c.exe']);
    for (const file of files) {
      const original = Object.entries(payload).find(([name]) => name.endsWith(file.baseName))![1];
      assert.equal(file.hashes.sha256, sha256(original), file.name);
      assert.equal(sha256(readFileSync(file.path)), sha256(original));
      assert.equal(file.hashes.size, original.length);
      assert.ok(file.path.startsWith(work + '/'), `${file.path} is inside the work folder`);
    }
  }

  before(() => {
    root = mkdtempSync(join(tmpdir(), 'nestbox-archives-'));
    src = join(root, 'src');
    mkdirSync(join(src, 'tree/sub/deeper'), { recursive: true });
    for (const [name, data] of Object.entries(payload)) writeFileSync(join(src, 'tree', name), data);
    const tree = join(src, 'tree');
    sh('7z', ['a', '-bd', '../plain.zip', '.'], tree);
    sh('7z', ['a', '-bd', '-pinfected', '../encrypted.zip', '.'], tree);
    sh('7z', ['a', '-bd', '-psecret', '../unknown-password.zip', '.'], tree);
    sh('7z', ['a', '-bd', '-pmalware', '../second-password.zip', '.'], tree);
    sh('7z', ['a', '-bd', '-pmalware', '-mhe=on', '../hidden.7z', '.'], tree);
    sh('7z', ['a', '-bd', '../plain.7z', '.'], tree);
    sh('tar', ['cf', '../plain.tar', '.'], tree);
    sh('tar', ['czf', '../plain.tar.gz', '.'], tree);
    sh('tar', ['cjf', '../plain.tar.bz2', '.'], tree);
    sh('tar', ['cJf', '../plain.tar.xz', '.'], tree);
    writeFileSync(join(src, 'single.txt'), payload['a.txt']);
    sh('gzip', ['-k', 'single.txt'], src);
  });
  beforeEach(() => {
    rmSync(join(root, 'work'), { recursive: true, force: true });
    work = join(root, 'work');
    mkdirSync(work);
  });
  after(() => {
    detector.close();
    rmSync(root, { recursive: true, force: true });
  });

  it('recognises archives by libmagic type, but not Office documents', () => {
    assert.equal(archiveKindOf('Zip archive data, at least v2.0 to extract'), 'zip');
    assert.equal(archiveKindOf('POSIX tar archive (GNU)'), 'tar');
    assert.equal(archiveKindOf('gzip compressed data, was "x"'), 'gzip');
    assert.equal(archiveKindOf('7-zip archive data, version 0.4'), '7z');
    assert.equal(archiveKindOf('Microsoft Word 2007+'), undefined);
    assert.equal(archiveKindOf('Java archive data (JAR)'), undefined);
    assert.equal(archiveKindOf('PE32 executable (GUI) Intel 80386, for MS Windows'), undefined);
  });

  for (const name of ['plain.zip', 'plain.7z', 'plain.tar', 'plain.tar.gz', 'plain.tar.bz2', 'plain.tar.xz', 'encrypted.zip', 'second-password.zip', 'hidden.7z']) {
    it(`unpacks ${name} to its regular files, byte-identical`, async () => {
      const files = await unpack(join(src, name));
      assertPayload(files);
      assert.ok(files.some((f) => f.name.endsWith('sub/deeper/c.exe')), files.map((f) => f.name).join());
    });
  }

  it('unpacks a single gzip file, naming it after the archive', async () => {
    const files = await unpack(join(src, 'single.txt.gz'));
    assert.equal(files.length, 1);
    assert.equal(files[0].baseName, 'single.txt');
    assert.equal(files[0].name, 'single.txt.gz/single.txt');
    assert.equal(files[0].fileType, 'ASCII text');
  });

  it('refuses an archive encrypted with a password it was not given, naming it', async () => {
    await assert.rejects(unpack(join(src, 'unknown-password.zip')), (error) => {
      assert.ok(isNestboxError(error, 'invalid_input'));
      assert.match(error.message, /^unknown-password\.zip: is encrypted and none of the configured archive passwords opens it$/);
      return true;
    });
    assert.deepEqual(workFiles(), []);
  });

  it('opens nested archives up to max_depth, keeping deeper ones as files', async () => {
    const dir = join(root, 'nest');
    mkdirSync(dir, { recursive: true });
    sh('cp', [join(src, 'plain.tar.gz'), join(src, 'encrypted.zip'), dir], root);
    writeFileSync(join(dir, 'top.txt'), 'top\n');
    sh('7z', ['a', '-bd', join(src, 'nested.zip'), '.'], dir);
    const deep = await unpack(join(src, 'nested.zip'));
    assert.deepEqual(deep.map((f) => f.baseName).sort(), ['a.txt', 'a.txt', 'b.bin', 'b.bin', 'c.exe', 'c.exe', 'top.txt']);
    assert.ok(deep.some((f) => f.name === 'nested.zip/plain.tar.gz/plain.tar/./sub/deeper/c.exe'), deep.map((f) => f.name).join());

    rmSync(work, { recursive: true });
    mkdirSync(work);
    const shallow = await unpack(join(src, 'nested.zip'), { maxDepth: 1 });
    assert.deepEqual(shallow.map((f) => f.baseName).sort(), ['encrypted.zip', 'plain.tar.gz', 'top.txt']);
  });

  it('refuses a zip bomb from its listing, before unpacking anything', async () => {
    writeFileSync(join(src, 'zeros.bin'), new Uint8Array(20 * 1024 * 1024));
    sh('7z', ['a', '-bd', '-mx=9', 'bomb.zip', 'zeros.bin'], src);
    assert.ok(statSync(join(src, 'bomb.zip')).size < 100_000);
    await assert.rejects(unpack(join(src, 'bomb.zip')), (error: Error) => {
      assert.equal(error.message, 'bomb.zip: unpacks to more than 1048576 bytes (archives.max_total_size); refused');
      return true;
    });
    assert.deepEqual(workFiles(), []);
  });

  it('refuses a gzip whose header lies about its size, while unpacking, leaving nothing behind', async () => {
    writeFileSync(join(src, 'liar.bin'), new Uint8Array(5 * 1024 * 1024));
    sh('gzip', ['-k', 'liar.bin'], src);
    const gz = readFileSync(join(src, 'liar.bin.gz'));
    gz.writeUInt32LE(10, gz.length - 4); // the trailer now claims 10 bytes
    writeFileSync(join(src, 'liar.bin.gz'), gz);
    await assert.rejects(unpack(join(src, 'liar.bin.gz')), /liar\.bin\.gz: unpacks to more than 1048576 bytes/);
    assert.deepEqual(workFiles(), []);
  });

  it('refuses archives with more files than max_files', async () => {
    await assert.rejects(unpack(join(src, 'plain.zip'), { maxFiles: 2 }), /plain\.zip: holds more than 2 files \(archives\.max_files\); refused/);
    assert.deepEqual(workFiles(), []);
  });

  it('counts the limits over the whole nested tree', async () => {
    // nested.zip holds 7 files in total once its inner archives are open.
    await assert.rejects(unpack(join(src, 'nested.zip'), { maxFiles: 5 }), /max_files/);
  });

  it('ignores symlinks, hard links, devices and fifos, and never writes outside its folder', async () => {
    const dir = join(root, 'special');
    mkdirSync(join(dir, 'd'), { recursive: true });
    writeFileSync(join(dir, 'regular.txt'), 'regular\n');
    symlinkSync('/etc/passwd', join(dir, 'link-to-passwd'));
    symlinkSync('/tmp', join(dir, 'd/dirlink'));
    linkSync(join(dir, 'regular.txt'), join(dir, 'hardlink.txt'));
    execFileSync('mkfifo', [join(dir, 'fifo')]);
    execFileSync('mknod', [join(dir, 'null'), 'c', '1', '3']);
    const outside = join(root, `escaped-${process.pid}`);
    const escapes = [join(dir, 'escape-src')];
    writeFileSync(escapes[0], 'escape\n');
    // Members named ../../escaped-<pid> and /<root>/escaped-abs; a link then a file through the link.
    sh('tar', ['cf', join(src, 'special.tar'), '-C', dir, 'regular.txt', 'link-to-passwd', 'hardlink.txt', 'fifo', 'null', 'd'], dir);
    sh('tar', ['rf', join(src, 'special.tar'), '-C', dir, '--transform', `s,escape-src,../../escaped-${process.pid},`, 'escape-src'], dir);
    sh('tar', ['rPf', join(src, 'special.tar'), '--transform', `s,.*escape-src,${outside}-abs,`, escapes[0]], dir);
    sh('tar', ['rf', join(src, 'special.tar'), '-C', dir, '--transform', 's,escape-src,d/dirlink/nestbox-through-link,', 'escape-src'], dir);
    const files = await unpack(join(src, 'special.tar'));
    assert.deepEqual(files.map((f) => f.baseName).sort(), ['escaped-' + process.pid, 'escaped-' + process.pid + '-abs', 'nestbox-through-link', 'regular.txt']);
    for (const file of files) assert.ok(file.path.startsWith(work + '/'));
    assert.equal(existsSync(outside), false);
    assert.equal(existsSync(`${outside}-abs`), false);
    assert.equal(existsSync(join(root, '..', `escaped-${process.pid}`)), false);
    assert.equal(existsSync('/tmp/nestbox-through-link'), false);
    assert.equal(readFileSync(files.find((f) => f.baseName === 'regular.txt')!.path, 'utf8'), 'regular\n');
  });

  it('makes entry names safe file names', () => {
    assert.equal(safeEntryName('dir/sub\\evil.exe'), 'evil.exe');
    assert.equal(safeEntryName('..'), 'file');
    assert.equal(safeEntryName('a/'), 'file');
    assert.equal(safeEntryName('bad\nname'), 'bad_name');
    const long = safeEntryName(`${'x'.repeat(300)}.exe`);
    assert.ok(Buffer.byteLength(long) <= 200);
    assert.ok(long.endsWith('.exe'));
  });
});
