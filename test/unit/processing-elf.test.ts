import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { type ElfInfo, parseElfFile } from '../../src/processing/elf.js';

/** ELF facts compared with what binutils' readelf prints for the same files. */

const readelf = (args: string[], file: string) => execFileSync('readelf', [...args, '--wide', file], { encoding: 'utf8', env: { ...process.env, LC_ALL: 'C' } });
const num = (hex: string) => Number.parseInt(hex.replace(/^0x/, ''), 16);

function headerField(text: string, name: string): string {
  const line = text.split('\n').find((entry) => entry.trim().startsWith(`${name}:`));
  assert.ok(line, `readelf -h prints ${name}`);
  return line.slice(line.indexOf(':') + 1).trim();
}

function readelfSections(file: string) {
  return readelf(['-S'], file)
    .split('\n')
    .map((line) => /^\s*\[\s*(\d+)\]\s+(\S*)\s+(\S+)\s+([0-9a-f]{8,16})\s+([0-9a-f]{6,})\s+([0-9a-f]{6,})\s+([0-9a-f]{2})\s/.exec(line))
    .filter((match): match is RegExpExecArray => match !== null)
    .map((m) => ({ name: m[2], type: m[3], address: num(m[4]!), offset: num(m[5]!), size: num(m[6]!) }));
}

function readelfSegments(file: string) {
  return readelf(['-l'], file)
    .split('\n')
    .map((line) => /^\s+([A-Z_]+)\s+0x([0-9a-f]+)\s+0x([0-9a-f]+)\s+0x([0-9a-f]+)\s+0x([0-9a-f]+)\s+0x([0-9a-f]+)\s+(.{3})\s+0x([0-9a-f]+)$/.exec(line))
    .filter((match): match is RegExpExecArray => match !== null)
    .map((m) => ({ type: m[1], offset: num(m[2]!), vaddr: num(m[3]!), filesz: num(m[5]!), memsz: num(m[6]!), flags: m[7], align: num(m[8]!) }));
}

function readelfSymbols(file: string) {
  const tables = new Map<string, string[]>();
  let current: string[] | undefined;
  for (const line of readelf(['-s'], file).split('\n')) {
    const header = /^Symbol table '([^']+)' contains (\d+) entries/.exec(line);
    if (header) {
      current = [];
      tables.set(header[1]!, current);
      continue;
    }
    const symbol = /^\s*\d+:\s+[0-9a-f]+\s+\S+\s+\S+\s+\S+\s+\S+\s+\S+\s*(.*)$/.exec(line);
    if (symbol && current) current.push(symbol[1]!.replace(/ \(\d+\)$/, '').split('@')[0]!);
  }
  return tables;
}

function compareWithReadelf(file: string, elf: ElfInfo): void {
  const header = readelf(['-h'], file);
  assert.equal(elf.file_header.class, headerField(header, 'Class'));
  assert.equal(elf.file_header.machine, headerField(header, 'Machine'));
  assert.equal(elf.file_header.type, headerField(header, 'Type'));
  assert.equal(elf.file_header.os_abi, headerField(header, 'OS/ABI'));
  assert.equal(num(elf.file_header.entry_point_address), num(headerField(header, 'Entry point address')));
  assert.equal(elf.file_header.number_of_section_headers, Number(headerField(header, 'Number of section headers')));
  assert.equal(elf.file_header.number_of_program_headers, Number(headerField(header, 'Number of program headers')));

  const sections = readelfSections(file);
  assert.deepEqual(
    elf.section_headers.map((s) => ({ name: s.name, type: s.type, address: num(s.address), offset: s.offset, size: s.size })),
    sections,
  );
  const segments = readelfSegments(file);
  assert.deepEqual(
    elf.program_headers.map((p) => ({ type: p.type, offset: p.offset, vaddr: num(p.virtual_address), filesz: p.file_size, memsz: p.memory_size, flags: p.flags, align: p.align })),
    segments,
  );
  const program = readelf(['-l'], file);
  const interpreter = /\[Requesting program interpreter: ([^\]]+)\]/.exec(program)?.[1] ?? null;
  assert.equal(elf.interpreter, interpreter);
  const dynamic = readelf(['-d'], file);
  const needed = [...dynamic.matchAll(/\(NEEDED\)\s+Shared library: \[([^\]]+)\]/g)].map((m) => m[1]);
  assert.deepEqual(elf.needed, needed);
  const tables = readelfSymbols(file);
  assert.ok(tables.size > 0, 'readelf lists symbol tables');
  for (const [table, names] of tables) {
    assert.ok(names.length > 0);
    const mine = elf.symbols.filter((symbol) => symbol.table === table).map((symbol) => symbol.name.split('@')[0]);
    assert.deepEqual(mine, names, `symbols of ${table}`);
  }
}

describe('ELF static analysis', () => {
  let dir: string;
  before(() => {
    dir = mkdtempSync(join(tmpdir(), 'nestbox-elf-'));
    writeFileSync(
      join(dir, 'hello.c'),
      '#include <stdio.h>\n#include <math.h>\nint counter = 3;\nint main(int argc, char **argv) { printf("%s %d\\n", argv[0], counter); return (int)sqrt((double)argc); }\n',
    );
    execFileSync('gcc', ['-O1', '-o', join(dir, 'dynamic'), join(dir, 'hello.c'), '-lm']);
    execFileSync('gcc', ['-O1', '-static', '-o', join(dir, 'static'), join(dir, 'hello.c'), '-lm']);
    execFileSync('gcc', ['-O1', '-shared', '-fPIC', '-Wl,-soname,libhello.so.1', '-o', join(dir, 'libhello.so'), join(dir, 'hello.c')]);
  });
  after(() => rmSync(dir, { recursive: true, force: true }));

  it('reads /bin/ls as readelf does', async () => {
    const elf = await parseElfFile('/bin/ls');
    assert.ok(elf);
    compareWithReadelf('/bin/ls', elf);
    assert.equal(elf.stripped, true);
    assert.equal(elf.static_linked, false);
  });

  it('reads a dynamic binary built by gcc: interpreter, libraries, both symbol tables', async () => {
    const file = join(dir, 'dynamic');
    const elf = await parseElfFile(file);
    assert.ok(elf);
    compareWithReadelf(file, elf);
    assert.deepEqual(elf.needed, ['libm.so.6', 'libc.so.6']);
    assert.equal(elf.stripped, false);
    assert.ok(elf.symbols.some((symbol) => symbol.table === '.symtab' && symbol.name === 'counter' && symbol.type === 'OBJECT' && symbol.bind === 'GLOBAL'));
    assert.ok(elf.symbols.some((symbol) => symbol.table === '.symtab' && symbol.name === 'main' && symbol.type === 'FUNC'));
  });

  it('reads a static binary: no interpreter, no dynamic section', async () => {
    const file = join(dir, 'static');
    const elf = await parseElfFile(file);
    assert.ok(elf);
    compareWithReadelf(file, elf);
    assert.equal(elf.interpreter, null);
    assert.equal(elf.static_linked, true);
    assert.equal(elf.file_header.type, 'EXEC (Executable file)');
  });

  it('reads a shared library with its soname', async () => {
    const file = join(dir, 'libhello.so');
    const elf = await parseElfFile(file);
    assert.ok(elf);
    compareWithReadelf(file, elf);
    assert.equal(elf.soname, 'libhello.so.1');
    assert.equal(elf.file_header.type, 'DYN (Shared object file)');
  });

  it('gives partial facts, never an exception, for truncated and corrupt files', async () => {
    const whole = execFileSync('cat', ['/bin/ls'], { maxBuffer: 64 << 20 });
    const truncated = join(dir, 'truncated');
    writeFileSync(truncated, whole.subarray(0, 4096));
    const elf = await parseElfFile(truncated);
    assert.ok(elf);
    assert.equal(elf.section_headers.length, 0, 'the section table lies beyond the end');
    assert.ok(elf.program_headers.length > 0);

    const corrupt = Buffer.from(whole.subarray(0, 8192));
    corrupt.writeUInt16LE(0xffff, 60); // e_shnum
    corrupt.writeBigUInt64LE(0xffffffffffffn, 40); // e_shoff far beyond the file
    writeFileSync(join(dir, 'corrupt'), corrupt);
    const broken = await parseElfFile(join(dir, 'corrupt'));
    assert.ok(broken);
    assert.equal(broken.section_headers.length, 0);

    writeFileSync(join(dir, 'not-elf'), 'just text');
    assert.equal(await parseElfFile(join(dir, 'not-elf')), undefined);
  });
});
