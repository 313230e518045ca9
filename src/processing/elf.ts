import { BinaryReader, cString, hex } from '../formats/binary-reader.js';

/**
 * ELF facts for `static.elf`, named as `readelf` prints them: file header, program headers (segments),
 * section headers, dynamic tags, interpreter, needed libraries and symbols. Every offset and count
 * comes from the (untrusted) file, so each one is bounded and a broken file gives partial facts.
 */

export interface ElfFileHeader {
  magic: string;
  class: string;
  data: string;
  version: string;
  os_abi: string;
  abi_version: number;
  type: string;
  machine: string;
  entry_point_address: string;
  start_of_program_headers: number;
  start_of_section_headers: number;
  flags: string;
  size_of_this_header: number;
  size_of_program_headers: number;
  number_of_program_headers: number;
  size_of_section_headers: number;
  number_of_section_headers: number;
  section_header_string_table_index: number;
}

export interface ElfProgramHeader {
  type: string;
  offset: number;
  virtual_address: string;
  physical_address: string;
  file_size: number;
  memory_size: number;
  flags: string;
  align: number;
}

export interface ElfSectionHeader {
  name: string;
  type: string;
  address: string;
  offset: number;
  size: number;
  entry_size: number;
  flags: string;
  link: number;
  info: number;
  align: number;
}

export interface ElfDynamicTag {
  tag: string;
  type: string;
  value: string;
}

export interface ElfSymbol {
  table: string;
  num: number;
  value: string;
  size: number;
  type: string;
  bind: string;
  visibility: string;
  ndx: string;
  name: string;
}

export interface ElfInfo {
  file_header: ElfFileHeader;
  interpreter: string | null;
  needed: string[];
  soname: string | null;
  rpath: string | null;
  runpath: string | null;
  program_headers: ElfProgramHeader[];
  section_headers: ElfSectionHeader[];
  dynamic_tags: ElfDynamicTag[];
  symbols: ElfSymbol[];
  /** Symbols beyond the per-table limit, not listed. */
  symbols_omitted: number;
  /** No .symtab: only the dynamic symbols are known. */
  stripped: boolean;
  /** Linked without an interpreter and without dynamic section. */
  static_linked: boolean;
}

/** Symbols listed per table; libraries can have tens of thousands. */
export const MAX_SYMBOLS_PER_TABLE = 10000;

const TYPES: Record<number, string> = {
  0: 'NONE (None)',
  1: 'REL (Relocatable file)',
  2: 'EXEC (Executable file)',
  3: 'DYN (Shared object file)',
  4: 'CORE (Core file)',
};
const MACHINES: Record<number, string> = {
  0: 'None',
  2: 'Sparc',
  3: 'Intel 80386',
  8: 'MIPS R3000',
  20: 'PowerPC',
  21: 'PowerPC64',
  22: 'IBM S/390',
  40: 'ARM',
  42: 'Renesas / SuperH SH',
  43: 'Sparc v9',
  50: 'Intel IA-64',
  62: 'Advanced Micro Devices X86-64',
  183: 'AArch64',
  243: 'RISC-V',
  258: 'LoongArch',
};
const OS_ABIS: Record<number, string> = {
  0: 'UNIX - System V',
  1: 'UNIX - HP-UX',
  2: 'UNIX - NetBSD',
  3: 'UNIX - GNU',
  6: 'UNIX - Solaris',
  9: 'UNIX - FreeBSD',
  12: 'UNIX - OpenBSD',
  97: 'ARM',
  255: 'Standalone App',
};
const SEGMENT_TYPES: Record<number, string> = {
  0: 'NULL',
  1: 'LOAD',
  2: 'DYNAMIC',
  3: 'INTERP',
  4: 'NOTE',
  5: 'SHLIB',
  6: 'PHDR',
  7: 'TLS',
  0x6474e550: 'GNU_EH_FRAME',
  0x6474e551: 'GNU_STACK',
  0x6474e552: 'GNU_RELRO',
  0x6474e553: 'GNU_PROPERTY',
  0x6474e554: 'GNU_SFRAME',
};
const SECTION_TYPES: Record<number, string> = {
  0: 'NULL',
  1: 'PROGBITS',
  2: 'SYMTAB',
  3: 'STRTAB',
  4: 'RELA',
  5: 'HASH',
  6: 'DYNAMIC',
  7: 'NOTE',
  8: 'NOBITS',
  9: 'REL',
  10: 'SHLIB',
  11: 'DYNSYM',
  14: 'INIT_ARRAY',
  15: 'FINI_ARRAY',
  16: 'PREINIT_ARRAY',
  17: 'GROUP',
  18: 'SYMTAB SECTION INDICES',
  19: 'RELR',
  0x6ffffff5: 'GNU_ATTRIBUTES',
  0x6ffffff6: 'GNU_HASH',
  0x6ffffff7: 'GNU_LIBLIST',
  0x6ffffffd: 'VERDEF',
  0x6ffffffe: 'VERNEED',
  0x6fffffff: 'VERSYM',
};
const DYNAMIC_TAGS: Record<number, string> = {
  0: 'NULL',
  1: 'NEEDED',
  2: 'PLTRELSZ',
  3: 'PLTGOT',
  4: 'HASH',
  5: 'STRTAB',
  6: 'SYMTAB',
  7: 'RELA',
  8: 'RELASZ',
  9: 'RELAENT',
  10: 'STRSZ',
  11: 'SYMENT',
  12: 'INIT',
  13: 'FINI',
  14: 'SONAME',
  15: 'RPATH',
  16: 'SYMBOLIC',
  17: 'REL',
  18: 'RELSZ',
  19: 'RELENT',
  20: 'PLTREL',
  21: 'DEBUG',
  22: 'TEXTREL',
  23: 'JMPREL',
  24: 'BIND_NOW',
  25: 'INIT_ARRAY',
  26: 'FINI_ARRAY',
  27: 'INIT_ARRAYSZ',
  28: 'FINI_ARRAYSZ',
  29: 'RUNPATH',
  30: 'FLAGS',
  32: 'PREINIT_ARRAY',
  33: 'PREINIT_ARRAYSZ',
  34: 'SYMTAB_SHNDX',
  35: 'RELRSZ',
  36: 'RELR',
  37: 'RELRENT',
  0x6ffffef5: 'GNU_HASH',
  0x6ffffff0: 'VERSYM',
  0x6ffffff9: 'RELACOUNT',
  0x6ffffffa: 'RELCOUNT',
  0x6ffffffb: 'FLAGS_1',
  0x6ffffffc: 'VERDEF',
  0x6ffffffd: 'VERDEFNUM',
  0x6ffffffe: 'VERNEED',
  0x6fffffff: 'VERNEEDNUM',
};
const SYMBOL_TYPES = ['NOTYPE', 'OBJECT', 'FUNC', 'SECTION', 'FILE', 'COMMON', 'TLS'];
const SYMBOL_BINDS = ['LOCAL', 'GLOBAL', 'WEAK'];
const VISIBILITIES = ['DEFAULT', 'INTERNAL', 'HIDDEN', 'PROTECTED'];
const SECTION_FLAGS: Array<[number, string]> = [
  [0x1, 'W'],
  [0x2, 'A'],
  [0x4, 'X'],
  [0x10, 'M'],
  [0x20, 'S'],
  [0x40, 'I'],
  [0x80, 'L'],
  [0x100, 'O'],
  [0x200, 'G'],
  [0x400, 'T'],
  [0x800, 'C'],
  [0x80000000, 'E'],
];
const DF_1_PIE = 0x08000000;
const SHT_SYMTAB = 2;
const SHT_DYNSYM = 11;
const SHT_NOBITS = 8;
const PT_INTERP = 3;
const PT_DYNAMIC = 2;
const SHN_XINDEX = 0xffff;
const PN_XNUM = 0xffff;

/** Reads integers of the file's class and byte order. */
class Fields {
  constructor(
    readonly wide: boolean,
    readonly little: boolean,
  ) {}
  u8 = (b: Buffer, o: number) => (o < b.length ? b[o]! : 0);
  u16 = (b: Buffer, o: number) => (o + 2 <= b.length ? (this.little ? b.readUInt16LE(o) : b.readUInt16BE(o)) : 0);
  u32 = (b: Buffer, o: number) => (o + 4 <= b.length ? (this.little ? b.readUInt32LE(o) : b.readUInt32BE(o)) : 0);
  u64 = (b: Buffer, o: number) => (o + 8 <= b.length ? (this.little ? b.readBigUInt64LE(o) : b.readBigUInt64BE(o)) : 0n);
  /** An address-sized field (32 or 64 bits). */
  addr = (b: Buffer, o: number): bigint => (this.wide ? this.u64(b, o) : BigInt(this.u32(b, o)));
  num = (b: Buffer, o: number): number => Number(this.addr(b, o));
}

interface RawSection {
  nameOffset: number;
  type: number;
  flags: bigint;
  addr: bigint;
  offset: number;
  size: number;
  link: number;
  info: number;
  align: number;
  entsize: number;
}

export function isElf(head: Uint8Array): boolean {
  return head.length >= 4 && head[0] === 0x7f && head[1] === 0x45 && head[2] === 0x4c && head[3] === 0x46;
}

export async function parseElfFile(path: string): Promise<ElfInfo | undefined> {
  const reader = await BinaryReader.open(path);
  try {
    return await parseElf(reader);
  } finally {
    await reader.close();
  }
}

export async function parseElf(reader: BinaryReader): Promise<ElfInfo | undefined> {
  const ident = await reader.read(0, 64);
  if (!isElf(ident) || (ident[4] !== 1 && ident[4] !== 2) || (ident[5] !== 1 && ident[5] !== 2)) return undefined;
  const f = new Fields(ident[4] === 2, ident[5] === 1);
  const header = readHeader(ident, f);
  const sections = await readSections(reader, f, header);
  const shstrndx = header.shstrndx === SHN_XINDEX ? (sections[0]?.link ?? 0) : header.shstrndx;
  const names = sections[shstrndx] ? await reader.read(sections[shstrndx].offset, sections[shstrndx].size) : Buffer.alloc(0);
  const segments = await readSegments(reader, f, header, sections);
  const dynamic = await readDynamic(reader, f, segments, sections);
  const interpreter = await readInterpreter(reader, segments);
  const symbols = await readSymbols(reader, f, sections, names);
  const flags1 = dynamic.entries.find((entry) => entry.tag === 0x6ffffffb)?.value ?? 0n;
  const type = header.type === 3 && (flags1 & BigInt(DF_1_PIE)) !== 0n ? 'DYN (Position-Independent Executable file)' : named(TYPES, header.type);
  return {
    file_header: {
      magic: [...ident.subarray(0, 16)].map((byte) => byte.toString(16).padStart(2, '0')).join(' '),
      class: f.wide ? 'ELF64' : 'ELF32',
      data: f.little ? "2's complement, little endian" : "2's complement, big endian",
      version: ident[6] === 1 ? '1 (current)' : String(ident[6]),
      os_abi: named(OS_ABIS, ident[7]!),
      abi_version: ident[8]!,
      type,
      machine: named(MACHINES, header.machine),
      entry_point_address: hex(header.entry),
      start_of_program_headers: header.phoff,
      start_of_section_headers: header.shoff,
      flags: hex(header.flags),
      size_of_this_header: header.ehsize,
      size_of_program_headers: header.phentsize,
      number_of_program_headers: segments.length,
      size_of_section_headers: header.shentsize,
      number_of_section_headers: sections.length,
      section_header_string_table_index: shstrndx,
    },
    interpreter,
    needed: dynamic.needed,
    soname: dynamic.soname,
    rpath: dynamic.rpath,
    runpath: dynamic.runpath,
    program_headers: segments.map((segment) => segment.shown),
    section_headers: sections.map((section) => showSection(section, names)),
    dynamic_tags: dynamic.entries.map((entry) => ({
      tag: hex(entry.tag),
      type: named(DYNAMIC_TAGS, entry.tag),
      value: entry.text ?? hex(entry.value),
    })),
    symbols: symbols.list,
    symbols_omitted: symbols.omitted,
    stripped: !sections.some((section) => section.type === SHT_SYMTAB),
    static_linked: interpreter === null && dynamic.entries.length === 0,
  };
}

function readHeader(b: Buffer, f: Fields) {
  const w = f.wide;
  return {
    type: f.u16(b, 16),
    machine: f.u16(b, 18),
    entry: f.addr(b, 24),
    phoff: f.num(b, w ? 32 : 28),
    shoff: f.num(b, w ? 40 : 32),
    flags: f.u32(b, w ? 48 : 36),
    ehsize: f.u16(b, w ? 52 : 40),
    phentsize: f.u16(b, w ? 54 : 42),
    phnum: f.u16(b, w ? 56 : 44),
    shentsize: f.u16(b, w ? 58 : 46),
    shnum: f.u16(b, w ? 60 : 48),
    shstrndx: f.u16(b, w ? 62 : 50),
  };
}

type Header = ReturnType<typeof readHeader>;

async function readSections(reader: BinaryReader, f: Fields, header: Header): Promise<RawSection[]> {
  const size = header.shentsize;
  if (header.shoff === 0 || size < (f.wide ? 64 : 40)) return [];
  const first = parseSection(await reader.read(header.shoff, size), 0, f);
  // Extended numbering: with 0xff00 sections or more, the count lives in section 0's size field.
  const count = header.shnum === 0 ? Math.min(first.size, 1 << 20) : header.shnum;
  const table = await reader.read(header.shoff, count * size);
  const sections: RawSection[] = [];
  for (let i = 0; (i + 1) * size <= table.length; i++) sections.push(parseSection(table, i * size, f));
  return sections;
}

function parseSection(b: Buffer, o: number, f: Fields): RawSection {
  const w = f.wide;
  return {
    nameOffset: f.u32(b, o),
    type: f.u32(b, o + 4),
    flags: f.addr(b, o + 8),
    addr: f.addr(b, o + (w ? 16 : 12)),
    offset: f.num(b, o + (w ? 24 : 16)),
    size: f.num(b, o + (w ? 32 : 20)),
    link: f.u32(b, o + (w ? 40 : 24)),
    info: f.u32(b, o + (w ? 44 : 28)),
    align: f.num(b, o + (w ? 48 : 32)),
    entsize: f.num(b, o + (w ? 56 : 36)),
  };
}

function showSection(section: RawSection, names: Buffer): ElfSectionHeader {
  let flags = '';
  for (const [bit, letter] of SECTION_FLAGS) if ((section.flags & BigInt(bit)) !== 0n) flags += letter;
  return {
    name: cString(names, section.nameOffset),
    type: named(SECTION_TYPES, section.type),
    address: hex(section.addr),
    offset: section.offset,
    size: section.size,
    entry_size: section.entsize,
    flags,
    link: section.link,
    info: section.info,
    align: section.align,
  };
}

interface RawSegment {
  type: number;
  offset: number;
  vaddr: bigint;
  filesz: number;
  shown: ElfProgramHeader;
}

async function readSegments(reader: BinaryReader, f: Fields, header: Header, sections: RawSection[]): Promise<RawSegment[]> {
  const size = header.phentsize;
  if (header.phoff === 0 || size < (f.wide ? 56 : 32)) return [];
  const count = header.phnum === PN_XNUM ? (sections[0]?.info ?? 0) : header.phnum;
  const table = await reader.read(header.phoff, count * size);
  const segments: RawSegment[] = [];
  for (let o = 0; o + size <= table.length; o += size) {
    const w = f.wide;
    const type = f.u32(table, o);
    const flags = w ? f.u32(table, o + 4) : f.u32(table, o + 24);
    const offset = f.num(table, o + (w ? 8 : 4));
    const vaddr = f.addr(table, o + (w ? 16 : 8));
    const paddr = f.addr(table, o + (w ? 24 : 12));
    const filesz = f.num(table, o + (w ? 32 : 16));
    const memsz = f.num(table, o + (w ? 40 : 20));
    const align = f.num(table, o + (w ? 48 : 28));
    segments.push({
      type,
      offset,
      vaddr,
      filesz,
      shown: {
        type: named(SEGMENT_TYPES, type),
        offset,
        virtual_address: hex(vaddr),
        physical_address: hex(paddr),
        file_size: filesz,
        memory_size: memsz,
        flags: `${flags & 4 ? 'R' : ' '}${flags & 2 ? 'W' : ' '}${flags & 1 ? 'E' : ' '}`,
        align,
      },
    });
  }
  return segments;
}

async function readInterpreter(reader: BinaryReader, segments: RawSegment[]): Promise<string | null> {
  const interp = segments.find((segment) => segment.type === PT_INTERP);
  if (!interp) return null;
  return cString(await reader.read(interp.offset, Math.min(interp.filesz, 4096)), 0);
}

interface DynamicEntry {
  tag: number;
  value: bigint;
  text?: string;
}

async function readDynamic(reader: BinaryReader, f: Fields, segments: RawSegment[], sections: RawSection[]) {
  const result = { entries: [] as DynamicEntry[], needed: [] as string[], soname: null as string | null, rpath: null as string | null, runpath: null as string | null };
  const segment = segments.find((s) => s.type === PT_DYNAMIC);
  if (!segment) return result;
  const entrySize = f.wide ? 16 : 8;
  const table = await reader.read(segment.offset, Math.min(segment.filesz, 1 << 20));
  for (let o = 0; o + entrySize <= table.length; o += entrySize) {
    const tag = Number(f.addr(table, o));
    const value = f.addr(table, o + entrySize / 2);
    result.entries.push({ tag, value });
    if (tag === 0) break;
  }
  const strtabAddress = result.entries.find((entry) => entry.tag === 5)?.value;
  const strsz = Number(result.entries.find((entry) => entry.tag === 10)?.value ?? 0n);
  const strtabOffset = strtabAddress === undefined ? undefined : fileOffset(strtabAddress, segments, sections);
  if (strtabOffset === undefined) return result;
  const strings = await reader.read(strtabOffset, Math.min(strsz, 16 << 20));
  for (const entry of result.entries) {
    if (![1, 14, 15, 29].includes(entry.tag)) continue;
    const text = cString(strings, Number(entry.value), 'utf8');
    if (entry.tag === 1) {
      result.needed.push(text);
      entry.text = `Shared library: [${text}]`;
    } else if (entry.tag === 14) {
      result.soname = text;
      entry.text = `Library soname: [${text}]`;
    } else if (entry.tag === 15) {
      result.rpath = text;
      entry.text = `Library rpath: [${text}]`;
    } else {
      result.runpath = text;
      entry.text = `Library runpath: [${text}]`;
    }
  }
  return result;
}

/** File offset of a virtual address: through the LOAD segment holding it, else the section. */
function fileOffset(address: bigint, segments: RawSegment[], sections: RawSection[]): number | undefined {
  for (const segment of segments) {
    if (segment.type === 1 && address >= segment.vaddr && address < segment.vaddr + BigInt(segment.filesz)) {
      return segment.offset + Number(address - segment.vaddr);
    }
  }
  const section = sections.find((s) => s.type !== SHT_NOBITS && address >= s.addr && address < s.addr + BigInt(s.size));
  return section ? section.offset + Number(address - section.addr) : undefined;
}

async function readSymbols(reader: BinaryReader, f: Fields, sections: RawSection[], names: Buffer) {
  const list: ElfSymbol[] = [];
  let omitted = 0;
  for (const table of sections.filter((s) => s.type === SHT_DYNSYM || s.type === SHT_SYMTAB)) {
    const entrySize = table.entsize || (f.wide ? 24 : 16);
    if (entrySize < (f.wide ? 24 : 16)) continue;
    const total = Math.floor(table.size / entrySize);
    const shown = Math.min(total, MAX_SYMBOLS_PER_TABLE);
    omitted += total - shown;
    const data = await reader.read(table.offset, shown * entrySize);
    const strtab = sections[table.link];
    const strings = strtab ? await reader.read(strtab.offset, Math.min(strtab.size, 16 << 20)) : Buffer.alloc(0);
    const tableName = cString(names, table.nameOffset);
    for (let i = 0; (i + 1) * entrySize <= data.length; i++) {
      list.push(parseSymbol(data, i * entrySize, f, strings, tableName, i));
    }
  }
  return { list, omitted };
}

function parseSymbol(b: Buffer, o: number, f: Fields, strings: Buffer, table: string, num: number): ElfSymbol {
  const nameOffset = f.u32(b, o);
  const info = f.wide ? f.u8(b, o + 4) : f.u8(b, o + 12);
  const other = f.wide ? f.u8(b, o + 5) : f.u8(b, o + 13);
  const shndx = f.wide ? f.u16(b, o + 6) : f.u16(b, o + 14);
  const value = f.wide ? f.u64(b, o + 8) : BigInt(f.u32(b, o + 4));
  const size = f.wide ? Number(f.u64(b, o + 16)) : f.u32(b, o + 8);
  const type = info & 0xf;
  const bind = info >> 4;
  return {
    table,
    num,
    value: hex(value),
    size,
    type: type === 10 ? 'IFUNC' : (SYMBOL_TYPES[type] ?? `<unknown>: ${type}`),
    bind: bind === 10 ? 'UNIQUE' : (SYMBOL_BINDS[bind] ?? `<unknown>: ${bind}`),
    visibility: VISIBILITIES[other & 3]!,
    ndx: shndx === 0 ? 'UND' : shndx === 0xfff1 ? 'ABS' : shndx === 0xfff2 ? 'COM' : String(shndx),
    name: cString(strings, nameOffset, 'utf8'),
  };
}

function named(table: Record<number, string>, value: number): string {
  return table[value] ?? hex(value);
}
