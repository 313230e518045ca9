import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { parseElfFile } from '../../src/processing/elf.js';
import { detectPackers } from '../../src/processing/packer.js';
import { parsePeFile } from '../../src/formats/pe.js';
import { detectScript } from '../../src/processing/script.js';

/** Script recognition and packer signs on files built here: gcc and mingw binaries, random data, scripts. */

describe('scripts', () => {
  it('names the language from the #! line, through env and its options', () => {
    const cases: Array<[string, string, string | null, string[]]> = [
      ['#!/bin/sh\necho hi\n', 'shell', '/bin/sh', []],
      ['#!/usr/bin/env -S python3 -u\nprint(1)\n', 'python', 'python3', ['-u']],
      ['#!/usr/bin/env LANG=C perl -w\n', 'perl', 'perl', ['-w']],
      ['#! /usr/bin/node\n', 'javascript', '/usr/bin/node', []],
      ['#!/opt/weird/interp\n', 'interp', '/opt/weird/interp', []],
    ];
    for (const [text, language, interpreter, args] of cases) {
      const script = detectScript('x', Buffer.from(text));
      assert.deepEqual(script, { language, shebang: text.split('\n')[0], interpreter, arguments: args }, text);
    }
  });

  it('falls back to the file name for text without #!, and never calls binary data a script', () => {
    assert.equal(detectScript('run.ps1', Buffer.from('Write-Host "hi"\r\n'))?.language, 'powershell');
    assert.equal(detectScript('INVOICE.VBS', Buffer.from('MsgBox "x"\n'))?.language, 'vbscript');
    assert.equal(detectScript('notes.txt', Buffer.from('just words\n')), undefined);
    assert.equal(detectScript('fake.sh', Buffer.from([0x7f, 0x45, 0x4c, 0x46, 0, 1, 2])), undefined);
    assert.equal(detectScript('empty.sh', Buffer.alloc(0)), undefined);
  });
});

describe('packers', () => {
  let dir: string;
  before(() => {
    dir = mkdtempSync(join(tmpdir(), 'nestbox-static-'));
    writeFileSync(join(dir, 'a.c'), 'int main(void) { return 0; }\n');
    execFileSync('gcc', ['-O1', '-o', join(dir, 'plain'), join(dir, 'a.c')]);
    execFileSync('x86_64-w64-mingw32-gcc', ['-O1', '-o', join(dir, 'plain.exe'), join(dir, 'a.c')]);
    // 8 KiB of code-segment bytes, so the executable segment is large enough to judge.
    writeFileSync(join(dir, 'big.c'), '__attribute__((section(".text"))) const unsigned char pad[8192] = {1};\nint main(int c, char **v) { return pad[c]; }\n');
    execFileSync('gcc', ['-O1', '-o', join(dir, 'big'), join(dir, 'big.c')], { stdio: 'ignore' });
  });
  after(() => rmSync(dir, { recursive: true, force: true }));

  it('finds nothing in an ordinary binary', async () => {
    const data = readFileSync(join(dir, 'plain'));
    const packer = detectPackers(data, undefined, await parseElfFile(join(dir, 'plain')));
    assert.deepEqual(packer.names, []);
    assert.equal(packer.high_entropy, false);
    assert.ok(packer.entropy > 0 && packer.entropy < 7);
  });

  it('recognises UPX markers and PE sections named after packers', async () => {
    const marked = Buffer.concat([readFileSync(join(dir, 'plain')), Buffer.from('\0UPX!\0$Info: This file is packed with the UPX executable packer\0')]);
    assert.deepEqual(detectPackers(marked).names, ['UPX']);
    // Rename the PE's .text section to UPX1, as UPX names the section holding the packed program.
    const exe = readFileSync(join(dir, 'plain.exe'));
    const renamed = Buffer.from(exe);
    const at = renamed.indexOf('.text\0\0\0');
    renamed.write('UPX1\0\0\0\0', at, 'latin1');
    writeFileSync(join(dir, 'renamed.exe'), renamed);
    const pe = await parsePeFile(join(dir, 'renamed.exe'));
    assert.ok(pe);
    assert.equal(pe.pe_sections[0]!.name, 'UPX1');
    assert.deepEqual(detectPackers(renamed, pe).names, ['UPX']);
  });

  it('flags data as random as encrypted or compressed code', async () => {
    const random = randomBytes(64 * 1024);
    const packer = detectPackers(random);
    assert.ok(packer.entropy > 7.9);
    assert.equal(packer.high_entropy, true);
    // An ELF whose executable segment is random bytes: the segment is named, the file as a whole may not be.
    const elf = readFileSync(join(dir, 'big'));
    const parsed = (await parseElfFile(join(dir, 'big')))!;
    assert.deepEqual(detectPackers(elf, undefined, parsed).high_entropy_sections, []);
    const text = parsed.program_headers.find((segment) => segment.type === 'LOAD' && segment.flags.includes('E'))!;
    const scrambled = Buffer.from(elf);
    randomBytes(text.file_size).copy(scrambled, text.offset);
    const result = detectPackers(scrambled, undefined, parsed);
    assert.deepEqual(result.high_entropy_sections, [`LOAD@${text.virtual_address}`]);
    assert.equal(result.high_entropy, true);
  });
});
