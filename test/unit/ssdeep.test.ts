import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { copyFileSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { hashFile } from '../../src/storage/hashing.js';
import { ssdeep, SsdeepHasher } from '../../src/storage/ssdeep.js';

/** What the reference implementation (libfuzzy's `ssdeep` CLI) prints for each file, by file name. */
function referenceHashes(files: string[]): Map<string, string> {
  const out = execFileSync('ssdeep', ['-b', '-s', ...files], { encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 });
  const result = new Map<string, string>();
  for (const line of out.split('\n').slice(1)) {
    const match = /^(.*),"(.*)"$/.exec(line);
    if (match) result.set(match[2], match[1]);
  }
  return result;
}

/** Random bytes whose compressibility varies, so triggers happen at many different rates. */
function mixedContent(size: number): Buffer {
  const data = randomBytes(size);
  for (let i = 0; i < size; i += 4096) {
    if ((i / 4096) % 3 === 1) data.fill(i & 0xff, i, Math.min(size, i + 4096));
  }
  return data;
}

describe('ssdeep', () => {
  let dir: string;
  const samples: string[] = [];
  const add = (name: string, data: Uint8Array) => {
    const path = join(dir, name);
    writeFileSync(path, data);
    samples.push(path);
  };

  before(() => {
    dir = mkdtempSync(join(tmpdir(), 'nestbox-ssdeep-'));
    add('empty', new Uint8Array(0));
    add('one-byte', Buffer.from('a'));
    add('short-text', Buffer.from('hello world\n'));
    add('zeros-1m', new Uint8Array(1024 * 1024));
    add('text-pattern', Buffer.from('The quick brown fox jumps over the lazy dog.\n'.repeat(5000)));
    const sizes = [2, 3, 7, 8, 63, 64, 191, 192, 193, 500, 1000, 4096, 6000, 12_288, 50_000, 100_000, 196_608, 400_000, 1_000_000, 3_000_000, 6_500_000];
    for (const size of sizes) add(`random-${size}`, randomBytes(size));
    for (const size of [10_000, 250_000, 2_000_000]) add(`mixed-${size}`, mixedContent(size));
    for (const binary of ['/bin/ls', '/bin/bash', '/usr/bin/7z', '/usr/share/common-licenses/GPL-3']) {
      if (!existsSync(binary)) continue;
      const copy = join(dir, `real-${basename(binary)}`);
      copyFileSync(binary, copy);
      samples.push(copy);
    }
  });
  after(() => rmSync(dir, { recursive: true, force: true }));

  it('matches the ssdeep CLI byte for byte on empty, tiny, text, random and real files', () => {
    const expected = referenceHashes(samples);
    assert.equal(expected.size, samples.length);
    for (const path of samples) {
      const data = readFileSync(path);
      const name = basename(path);
      assert.equal(ssdeep(data), expected.get(name), `ssdeep of ${name}`);
      // Without a size promise, and with a loose one (an HTTP Content-Length bounds a part), as uploads hash.
      assert.equal(new SsdeepHasher().update(data).digestText(), expected.get(name), `unbounded ssdeep of ${name}`);
      assert.equal(new SsdeepHasher(data.length * 5 + 4000).update(data).digestText(), expected.get(name), `loosely bounded ssdeep of ${name}`);
    }
  });

  it('gives the same digest however the stream is cut into chunks', () => {
    const data = mixedContent(700_000);
    const whole = ssdeep(data);
    for (const chunk of [1, 7, 1000, 65_536, 333_333]) {
      const hasher = new SsdeepHasher();
      for (let i = 0; i < data.length; i += chunk) hasher.update(data.subarray(i, i + chunk));
      assert.equal(hasher.digestText(), whole, `chunks of ${chunk}`);
    }
  });

  it('is what hashFile reports, next to md5/sha256 equal to the coreutils tools', async () => {
    const path = samples.find((p) => p.endsWith('random-1000000'))!;
    const hashes = await hashFile(path);
    assert.equal(hashes.ssdeep, referenceHashes([path]).get(basename(path)));
    assert.equal(hashes.md5, execFileSync('md5sum', [path], { encoding: 'utf8' }).split(' ')[0]);
    assert.equal(hashes.sha256, execFileSync('sha256sum', [path], { encoding: 'utf8' }).split(' ')[0]);
    assert.equal(hashes.size, 1_000_000);
    assert.match(hashes.crc32, /^[0-9A-F]{8}$/);
  });

  it('gives Cuckoo\'s crc32 text for an empty file', async () => {
    const hashes = await hashFile(samples[0]);
    assert.equal(hashes.crc32, '00000000');
    assert.equal(hashes.ssdeep, '3::');
    assert.equal(hashes.md5, 'd41d8cd98f00b204e9800998ecf8427e');
  });

  it('refuses input beyond the size it was promised rather than give a wrong digest', () => {
    const hasher = new SsdeepHasher(10);
    assert.throws(() => hasher.update(new Uint8Array(11)), RangeError);
  });

  it('hashes at least 20 MB per CPU second, so a 1 GiB upload costs well under a minute', () => {
    const data = randomBytes(64 * 1024 * 1024);
    const hasher = new SsdeepHasher(data.length);
    // CPU time rather than wall time: other processes on a busy machine must not fail this test.
    const start = process.cpuUsage();
    for (let i = 0; i < data.length; i += 65_536) hasher.update(data.subarray(i, i + 65_536));
    const used = process.cpuUsage(start);
    assert.ok(hasher.digestText()?.includes(':'));
    const rate = data.length / 1e6 / ((used.user + used.system) / 1e6);
    assert.ok(rate > 20, `ssdeep ran at ${rate.toFixed(0)} MB per CPU second`);
  });
});
