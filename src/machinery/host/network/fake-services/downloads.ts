import { extname } from 'node:path';

/**
 * What the fake web answers for a path: an HTML page by default, and for paths that look like a
 * download, something of the kind asked for, so a dropper goes on to its next step (writing the file,
 * making it executable, running it) where the behaviour log can see it.
 */
export interface Payload {
  contentType: string;
  body: Buffer;
}

const PAGE = Buffer.from(
  '<!DOCTYPE html>\n<html><head><title>Welcome</title></head>\n' +
    '<body><h1>It works!</h1><p>This server is up and running.</p></body></html>\n',
);

const SHELL_SCRIPT = Buffer.from('#!/bin/sh\nexit 0\n');
const PYTHON_SCRIPT = Buffer.from('#!/usr/bin/env python3\nraise SystemExit(0)\n');
const PERL_SCRIPT = Buffer.from('#!/usr/bin/env perl\nexit 0;\n');

const BINARY_EXTENSIONS = new Set([
  '.elf', '.bin', '.so', '.out', '.exe', '.dll', '.scr', '.x86', '.x86_64', '.i686', '.arm', '.arm5',
  '.arm6', '.arm7', '.aarch64', '.mips', '.mpsl', '.mipsel', '.ppc', '.sh4', '.m68k', '.spc', '.sparc',
]);

export function payloadFor(path: string): Payload {
  const extension = extname(safePathname(path)).toLowerCase();
  if (BINARY_EXTENSIONS.has(extension)) return { contentType: 'application/octet-stream', body: TINY_ELF };
  switch (extension) {
    case '.sh':
    case '.bash':
      return { contentType: 'text/x-shellscript', body: SHELL_SCRIPT };
    case '.py':
      return { contentType: 'text/x-python', body: PYTHON_SCRIPT };
    case '.pl':
      return { contentType: 'text/x-perl', body: PERL_SCRIPT };
    case '.txt':
      return { contentType: 'text/plain', body: Buffer.from('OK\n') };
    case '.json':
      return { contentType: 'application/json', body: Buffer.from('{}\n') };
    default:
      return { contentType: 'text/html; charset=utf-8', body: PAGE };
  }
}

function safePathname(path: string): string {
  const end = path.search(/[?#]/);
  return end >= 0 ? path.slice(0, end) : path;
}

/** The smallest useful Linux program: an x86-64 ELF executable whose only instructions are exit(0). */
export const TINY_ELF: Buffer = buildTinyElf();

function buildTinyElf(): Buffer {
  const base = 0x400000n;
  const headerSize = 64;
  const programHeaderSize = 56;
  const code = Buffer.from([0x31, 0xff, 0xb8, 0x3c, 0x00, 0x00, 0x00, 0x0f, 0x05]); // xor edi,edi; mov eax,60; syscall
  const size = headerSize + programHeaderSize + code.length;
  const elf = Buffer.alloc(size);
  Buffer.from([0x7f, 0x45, 0x4c, 0x46, 2, 1, 1, 0]).copy(elf, 0); // magic, 64-bit, little-endian, version 1, System V
  elf.writeUInt16LE(2, 16); // ET_EXEC
  elf.writeUInt16LE(0x3e, 18); // x86-64
  elf.writeUInt32LE(1, 20);
  elf.writeBigUInt64LE(base + BigInt(headerSize + programHeaderSize), 24); // entry point: the code
  elf.writeBigUInt64LE(BigInt(headerSize), 32); // program headers follow the ELF header
  elf.writeUInt16LE(headerSize, 52);
  elf.writeUInt16LE(programHeaderSize, 54);
  elf.writeUInt16LE(1, 56);
  const ph = headerSize;
  elf.writeUInt32LE(1, ph); // PT_LOAD
  elf.writeUInt32LE(5, ph + 4); // readable, executable
  elf.writeBigUInt64LE(base, ph + 16);
  elf.writeBigUInt64LE(base, ph + 24);
  elf.writeBigUInt64LE(BigInt(size), ph + 32);
  elf.writeBigUInt64LE(BigInt(size), ph + 40);
  elf.writeBigUInt64LE(0x1000n, ph + 48);
  code.copy(elf, headerSize + programHeaderSize);
  return elf;
}
