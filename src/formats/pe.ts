import { createHash, X509Certificate } from 'node:crypto';
import { BinaryReader, cString, entropy, hex } from './binary-reader.js';
import { certificatesOfPkcs7 } from './der.js';
import { languageName, sublanguageName } from './pe-languages.js';
import { ordinalName } from './pe-ordinals.js';

/**
 * PE facts for `static`, under Cuckoo's key names: pe_imports, pe_exports, pe_sections, pe_resources,
 * pe_versioninfo, pe_imphash (computed as python's pefile computes it), pe_timestamp, pdb_path,
 * signature, imported_dll_count, plus pe_header with the header fields. Every offset and count comes
 * from the untrusted file, so each is bounded and a broken file gives partial facts.
 */

export interface PeSection {
  name: string;
  virtual_address: string;
  virtual_size: string;
  size_of_data: string;
  entropy: number;
  characteristics: string;
}

export interface PeImport {
  dll: string;
  imports: Array<{ address: string; name: string | null; ordinal?: number }>;
}

export interface PeExport {
  address: string;
  name: string | null;
  ordinal: number;
  forwarder?: string;
}

export interface PeResource {
  name: string;
  offset: string;
  size: string;
  /** Raw bytes, for the caller to type with libmagic; not part of the report. */
  data?: Buffer;
  filetype: string | null;
  language: string | null;
  sublanguage: string | null;
}

export interface PeCertificate {
  common_name: string | null;
  organization: string | null;
  locality: string | null;
  country: string | null;
  email: string | null;
  serial_number: string;
  issuer: string;
  subject: string;
  valid_from: string;
  valid_to: string;
  sha1: string;
  sha256: string;
}

export interface PeInfo {
  pe_header: Record<string, string | number | boolean | string[]>;
  pe_sections: PeSection[];
  pe_imports: PeImport[];
  pe_exports: PeExport[];
  pe_resources: PeResource[];
  pe_versioninfo: Array<{ name: string; value: string }>;
  pe_imphash: string;
  pe_timestamp: string;
  pdb_path: string | null;
  signature: PeCertificate[];
  signed: boolean;
  imported_dll_count: number;
}

const MAX_SECTIONS = 256;
const MAX_DLLS = 4096;
const MAX_IMPORTS_PER_DLL = 8192;
const MAX_EXPORTS = 65536;
const MAX_RESOURCES = 1024;

const MACHINES: Record<number, string> = {
  0x14c: 'IMAGE_FILE_MACHINE_I386',
  0x8664: 'IMAGE_FILE_MACHINE_AMD64',
  0x1c0: 'IMAGE_FILE_MACHINE_ARM',
  0x1c4: 'IMAGE_FILE_MACHINE_ARMNT',
  0xaa64: 'IMAGE_FILE_MACHINE_ARM64',
  0x200: 'IMAGE_FILE_MACHINE_IA64',
};
const SUBSYSTEMS: Record<number, string> = {
  1: 'IMAGE_SUBSYSTEM_NATIVE',
  2: 'IMAGE_SUBSYSTEM_WINDOWS_GUI',
  3: 'IMAGE_SUBSYSTEM_WINDOWS_CUI',
  7: 'IMAGE_SUBSYSTEM_POSIX_CUI',
  9: 'IMAGE_SUBSYSTEM_WINDOWS_CE_GUI',
  10: 'IMAGE_SUBSYSTEM_EFI_APPLICATION',
  14: 'IMAGE_SUBSYSTEM_XBOX',
  16: 'IMAGE_SUBSYSTEM_WINDOWS_BOOT_APPLICATION',
};
const CHARACTERISTICS: Array<[number, string]> = [
  [0x0001, 'IMAGE_FILE_RELOCS_STRIPPED'],
  [0x0002, 'IMAGE_FILE_EXECUTABLE_IMAGE'],
  [0x0020, 'IMAGE_FILE_LARGE_ADDRESS_AWARE'],
  [0x0100, 'IMAGE_FILE_32BIT_MACHINE'],
  [0x0200, 'IMAGE_FILE_DEBUG_STRIPPED'],
  [0x1000, 'IMAGE_FILE_SYSTEM'],
  [0x2000, 'IMAGE_FILE_DLL'],
];
const DLL_CHARACTERISTICS: Array<[number, string]> = [
  [0x0020, 'HIGH_ENTROPY_VA'],
  [0x0040, 'DYNAMIC_BASE'],
  [0x0080, 'FORCE_INTEGRITY'],
  [0x0100, 'NX_COMPAT'],
  [0x0200, 'NO_ISOLATION'],
  [0x0400, 'NO_SEH'],
  [0x0800, 'NO_BIND'],
  [0x1000, 'APPCONTAINER'],
  [0x2000, 'WDM_DRIVER'],
  [0x4000, 'GUARD_CF'],
  [0x8000, 'TERMINAL_SERVER_AWARE'],
];
const RESOURCE_TYPES: Record<number, string> = {
  1: 'RT_CURSOR',
  2: 'RT_BITMAP',
  3: 'RT_ICON',
  4: 'RT_MENU',
  5: 'RT_DIALOG',
  6: 'RT_STRING',
  7: 'RT_FONTDIR',
  8: 'RT_FONT',
  9: 'RT_ACCELERATOR',
  10: 'RT_RCDATA',
  11: 'RT_MESSAGETABLE',
  12: 'RT_GROUP_CURSOR',
  14: 'RT_GROUP_ICON',
  16: 'RT_VERSION',
  17: 'RT_DLGINCLUDE',
  19: 'RT_PLUGPLAY',
  20: 'RT_VXD',
  21: 'RT_ANICURSOR',
  22: 'RT_ANIICON',
  23: 'RT_HTML',
  24: 'RT_MANIFEST',
};

interface RawSection {
  name: string;
  virtualSize: number;
  virtualAddress: number;
  rawSize: number;
  rawPointer: number;
  characteristics: number;
}

interface Layout {
  reader: BinaryReader;
  wide: boolean;
  imageBase: bigint;
  fileAlignment: number;
  sections: RawSection[];
  directories: Array<{ rva: number; size: number }>;
}

export function isPe(head: Uint8Array): boolean {
  return head.length >= 2 && head[0] === 0x4d && head[1] === 0x5a;
}

export async function parsePeFile(path: string): Promise<PeInfo | undefined> {
  const reader = await BinaryReader.open(path);
  try {
    return await parsePe(reader);
  } finally {
    await reader.close();
  }
}

/**
 * The names a PE file exports, in pefile's order (what a machine calls a DLL's function by); none for a
 * file that is no readable PE.
 */
export async function exportedNames(path: string): Promise<string[]> {
  const pe = await parsePeFile(path).catch(() => undefined);
  return (pe?.pe_exports ?? []).flatMap((entry) => (entry.name ? [entry.name] : []));
}

export async function parsePe(reader: BinaryReader): Promise<PeInfo | undefined> {
  const dos = await reader.read(0, 64);
  if (!isPe(dos) || dos.length < 64) return undefined;
  const peOffset = dos.readUInt32LE(0x3c);
  const coff = await reader.read(peOffset, 24);
  if (coff.length < 24 || coff.readUInt32LE(0) !== 0x4550) return undefined;
  const machine = coff.readUInt16LE(4);
  const sectionCount = Math.min(coff.readUInt16LE(6), MAX_SECTIONS);
  const timestamp = coff.readUInt32LE(8);
  const optionalSize = coff.readUInt16LE(20);
  const characteristics = coff.readUInt16LE(22);
  const optional = await reader.read(peOffset + 24, optionalSize);
  if (optional.length < 2) return undefined;
  const wide = optional.readUInt16LE(0) === 0x20b;
  const u32 = (offset: number) => (offset + 4 <= optional.length ? optional.readUInt32LE(offset) : 0);
  const u16 = (offset: number) => (offset + 2 <= optional.length ? optional.readUInt16LE(offset) : 0);
  const u64 = (offset: number) => (offset + 8 <= optional.length ? optional.readBigUInt64LE(offset) : 0n);
  const imageBase = wide ? u64(24) : BigInt(u32(28));
  const directoryStart = wide ? 112 : 96;
  const directoryCount = Math.min(u32(directoryStart - 4), 16);
  const directories = Array.from({ length: 16 }, (_, index) =>
    index < directoryCount ? { rva: u32(directoryStart + index * 8), size: u32(directoryStart + index * 8 + 4) } : { rva: 0, size: 0 },
  );
  const sections = await readSections(reader, peOffset + 24 + optionalSize, sectionCount);
  const layout: Layout = { reader, wide, imageBase, fileAlignment: u32(36), sections, directories };
  const imports = await readImports(layout);
  const subsystem = u16(68);
  const dllCharacteristics = u16(70);
  const security = directories[4]!;
  const resources = await readResources(layout);
  return {
    pe_header: {
      machine: MACHINES[machine] ?? hex(machine),
      magic: wide ? 'PE32+' : 'PE32',
      number_of_sections: coff.readUInt16LE(6),
      characteristics: flagNames(characteristics, CHARACTERISTICS),
      dll: (characteristics & 0x2000) !== 0,
      linker_version: `${optional[2] ?? 0}.${optional[3] ?? 0}`,
      entry_point: hex(u32(16)),
      image_base: hex(imageBase),
      section_alignment: u32(32),
      file_alignment: u32(36),
      os_version: `${u16(40)}.${u16(42)}`,
      subsystem_version: `${u16(48)}.${u16(50)}`,
      size_of_image: u32(56),
      size_of_headers: u32(60),
      checksum: hex(u32(64)),
      subsystem: SUBSYSTEMS[subsystem] ?? hex(subsystem),
      dll_characteristics: flagNames(dllCharacteristics, DLL_CHARACTERISTICS),
    },
    pe_sections: await Promise.all(sections.map((section) => showSection(layout, section))),
    pe_imports: imports,
    pe_exports: await readExports(layout),
    pe_resources: resources,
    pe_versioninfo: versionInfo(resources),
    pe_imphash: imphash(imports),
    pe_timestamp: new Date(timestamp * 1000).toISOString().slice(0, 19).replace('T', ' '),
    pdb_path: await readPdbPath(layout),
    signature: security.rva !== 0 && security.size !== 0 ? await readCertificates(reader, security.rva, security.size) : [],
    signed: security.rva !== 0 && security.size !== 0,
    imported_dll_count: imports.length,
  };
}

async function readSections(reader: BinaryReader, offset: number, count: number): Promise<RawSection[]> {
  const table = await reader.read(offset, count * 40);
  const sections: RawSection[] = [];
  for (let o = 0; o + 40 <= table.length; o += 40) {
    sections.push({
      name: cString(table.subarray(o, o + 8), 0, 'utf8'),
      virtualSize: table.readUInt32LE(o + 8),
      virtualAddress: table.readUInt32LE(o + 12),
      rawSize: table.readUInt32LE(o + 16),
      rawPointer: table.readUInt32LE(o + 20),
      characteristics: table.readUInt32LE(o + 36),
    });
  }
  return sections;
}

/** pefile rounds a section's raw pointer down to 512 bytes when the file alignment is at least that. */
function rawStart(layout: Layout, section: RawSection): number {
  return layout.fileAlignment >= 0x200 ? section.rawPointer - (section.rawPointer % 0x200) : section.rawPointer;
}

async function showSection(layout: Layout, section: RawSection): Promise<PeSection> {
  const start = rawStart(layout, section);
  const end = Math.min(start + section.rawSize, section.rawPointer + section.rawSize);
  const data = await layout.reader.read(start, Math.max(0, end - start));
  const hex8 = (value: number) => `0x${value.toString(16).padStart(8, '0')}`;
  return {
    name: section.name,
    virtual_address: hex8(section.virtualAddress),
    virtual_size: hex8(section.virtualSize),
    size_of_data: hex8(section.rawSize),
    entropy: entropy(data),
    characteristics: hex8(section.characteristics),
  };
}

/** File offset of a relative virtual address, or undefined when no section maps it. */
function rvaToOffset(layout: Layout, rva: number): number | undefined {
  for (const section of layout.sections) {
    const span = Math.max(section.virtualSize, section.rawSize);
    if (rva >= section.virtualAddress && rva < section.virtualAddress + span) {
      return rva - section.virtualAddress + rawStart(layout, section);
    }
  }
  const first = Math.min(...layout.sections.map((section) => section.virtualAddress));
  return layout.sections.length === 0 || rva < first ? rva : undefined;
}

async function readAt(layout: Layout, rva: number, length: number): Promise<Buffer> {
  const offset = rvaToOffset(layout, rva);
  return offset === undefined ? Buffer.alloc(0) : layout.reader.read(offset, length);
}

async function stringAt(layout: Layout, rva: number, max = 512): Promise<string> {
  return cString(await readAt(layout, rva, max), 0);
}

async function readImports(layout: Layout): Promise<PeImport[]> {
  const directory = layout.directories[1]!;
  if (directory.rva === 0) return [];
  const descriptors = await readAt(layout, directory.rva, MAX_DLLS * 20);
  const thunkSize = layout.wide ? 8 : 4;
  const imports: PeImport[] = [];
  for (let o = 0; o + 20 <= descriptors.length; o += 20) {
    const originalThunk = descriptors.readUInt32LE(o);
    const nameRva = descriptors.readUInt32LE(o + 12);
    const firstThunk = descriptors.readUInt32LE(o + 16);
    if (originalThunk === 0 && nameRva === 0 && firstThunk === 0) break;
    const dll = await stringAt(layout, nameRva);
    const thunks = await readAt(layout, originalThunk || firstThunk, MAX_IMPORTS_PER_DLL * thunkSize);
    const entries: PeImport['imports'] = [];
    for (let t = 0; t + thunkSize <= thunks.length; t += thunkSize) {
      const value = layout.wide ? thunks.readBigUInt64LE(t) : BigInt(thunks.readUInt32LE(t));
      if (value === 0n) break;
      const address = hex(layout.imageBase + BigInt(firstThunk + (t / thunkSize) * thunkSize));
      const byOrdinal = layout.wide ? value >> 63n === 1n : value >> 31n === 1n;
      if (byOrdinal) {
        // Like pefile, ordinals of well-known DLLs get their function's name.
        const ordinal = Number(value & 0xffffn);
        entries.push({ address, name: ordinalName(dll, ordinal), ordinal });
      }
      else entries.push({ address, name: await stringAt(layout, Number(value & 0x7fffffffn) + 2) });
    }
    imports.push({ dll, imports: entries });
  }
  return imports;
}

/** The import hash as pefile's get_imphash computes it. */
export function imphash(imports: readonly PeImport[]): string {
  const parts: string[] = [];
  for (const entry of imports) {
    const dllLower = entry.dll.toLowerCase();
    const dot = dllLower.lastIndexOf('.');
    const library = dot >= 0 && ['ocx', 'sys', 'dll'].includes(dllLower.slice(dot + 1)) ? dllLower.slice(0, dot) : dllLower;
    for (const symbol of entry.imports) {
      const name = symbol.name ?? `ord${symbol.ordinal}`;
      if (name) parts.push(`${library}.${name.toLowerCase()}`);
    }
  }
  return parts.length === 0 ? '' : createHash('md5').update(parts.join(',')).digest('hex');
}

async function readExports(layout: Layout): Promise<PeExport[]> {
  const directory = layout.directories[0]!;
  if (directory.rva === 0) return [];
  const header = await readAt(layout, directory.rva, 40);
  if (header.length < 40) return [];
  const base = header.readUInt32LE(16);
  const functionCount = Math.min(header.readUInt32LE(20), MAX_EXPORTS);
  const nameCount = Math.min(header.readUInt32LE(24), MAX_EXPORTS);
  const functions = await readAt(layout, header.readUInt32LE(28), functionCount * 4);
  const names = await readAt(layout, header.readUInt32LE(32), nameCount * 4);
  const ordinals = await readAt(layout, header.readUInt32LE(36), nameCount * 2);
  const exports: PeExport[] = [];
  const named = new Set<number>();
  const entry = async (index: number, name: string | null): Promise<PeExport | undefined> => {
    if (index * 4 + 4 > functions.length) return undefined;
    const rva = functions.readUInt32LE(index * 4);
    const result: PeExport = { address: hex(layout.imageBase + BigInt(rva)), name, ordinal: base + index };
    if (rva >= directory.rva && rva < directory.rva + directory.size) result.forwarder = await stringAt(layout, rva);
    return result;
  };
  // Named exports first in name-table order, then those exported by ordinal only, as pefile lists them.
  for (let i = 0; i * 4 + 4 <= names.length && i * 2 + 2 <= ordinals.length; i++) {
    const index = ordinals.readUInt16LE(i * 2);
    const symbol = await entry(index, await stringAt(layout, names.readUInt32LE(i * 4)));
    if (!symbol) continue;
    named.add(index);
    exports.push(symbol);
  }
  for (let index = 0; index < functionCount; index++) {
    if (named.has(index) || index * 4 + 4 > functions.length || functions.readUInt32LE(index * 4) === 0) continue;
    const symbol = await entry(index, null);
    if (symbol) exports.push(symbol);
  }
  return exports;
}

async function readResources(layout: Layout): Promise<PeResource[]> {
  const directory = layout.directories[2]!;
  if (directory.rva === 0) return [];
  const tree = await readAt(layout, directory.rva, Math.min(directory.size, 16 << 20));
  const resources: PeResource[] = [];
  const visited = new Set<number>();
  const entriesOf = (offset: number) => {
    if (visited.has(offset) || offset + 16 > tree.length) return [];
    visited.add(offset);
    const count = tree.readUInt16LE(offset + 12) + tree.readUInt16LE(offset + 14);
    const entries: Array<{ id: number | string; target: number; isDirectory: boolean }> = [];
    for (let i = 0; i < count && offset + 16 + i * 8 + 8 <= tree.length; i++) {
      const o = offset + 16 + i * 8;
      const nameField = tree.readUInt32LE(o);
      const dataField = tree.readUInt32LE(o + 4);
      entries.push({
        id: nameField & 0x80000000 ? resourceName(tree, nameField & 0x7fffffff) : nameField,
        target: dataField & 0x7fffffff,
        isDirectory: (dataField & 0x80000000) !== 0,
      });
    }
    return entries;
  };
  for (const type of entriesOf(0)) {
    if (!type.isDirectory) continue;
    const typeName = typeof type.id === 'string' ? type.id : (RESOURCE_TYPES[type.id] ?? String(type.id));
    for (const item of entriesOf(type.target)) {
      if (!item.isDirectory) continue;
      for (const language of entriesOf(item.target)) {
        if (language.isDirectory || language.target + 16 > tree.length || resources.length >= MAX_RESOURCES) continue;
        const dataRva = tree.readUInt32LE(language.target);
        const size = tree.readUInt32LE(language.target + 4);
        const lang = typeof language.id === 'number' ? language.id : 0;
        resources.push({
          name: typeName,
          offset: `0x${dataRva.toString(16).padStart(8, '0')}`,
          size: `0x${size.toString(16).padStart(8, '0')}`,
          data: await readAt(layout, dataRva, Math.min(size, 1 << 20)),
          filetype: null,
          language: languageName(lang & 0x3ff),
          sublanguage: sublanguageName(lang & 0x3ff, lang >> 10),
        });
      }
    }
  }
  return resources;
}

function resourceName(tree: Buffer, offset: number): string {
  if (offset + 2 > tree.length) return '';
  const length = tree.readUInt16LE(offset);
  return tree.toString('utf16le', offset + 2, Math.min(tree.length, offset + 2 + length * 2));
}

/** String table entries and the translation of the first RT_VERSION resource. */
function versionInfo(resources: readonly PeResource[]): Array<{ name: string; value: string }> {
  const version = resources.find((resource) => resource.name === 'RT_VERSION');
  if (!version?.data) return [];
  const entries: Array<{ name: string; value: string }> = [];
  walkVersionBlock(version.data, 0, version.data.length, [], entries, 0);
  return entries;
}

/** One VS_VERSIONINFO block: wLength, wValueLength, wType, key, padding, value, padding, children. */
function walkVersionBlock(
  data: Buffer,
  start: number,
  limit: number,
  path: string[],
  out: Array<{ name: string; value: string }>,
  depth: number,
): void {
  if (depth > 4 || start + 6 > limit) return;
  const length = data.readUInt16LE(start);
  const valueLength = data.readUInt16LE(start + 2);
  const isText = data.readUInt16LE(start + 4) === 1;
  const end = Math.min(start + length, limit);
  if (length < 6) return;
  let keyEnd = start + 6;
  while (keyEnd + 1 < end && data.readUInt16LE(keyEnd) !== 0) keyEnd += 2;
  const key = data.toString('utf16le', start + 6, keyEnd);
  const valueStart = align4(keyEnd + 2);
  const valueBytes = isText ? valueLength * 2 : valueLength;
  const parent = path[path.length - 1];
  if (path.length === 3 && path[1] === 'StringFileInfo') {
    const text = data.toString('utf16le', valueStart, Math.min(valueStart + valueBytes, end)).replace(/\0+$/, '');
    out.push({ name: key, value: text });
    return;
  }
  if (parent === 'VarFileInfo' && key === 'Translation') {
    const pairs: string[] = [];
    for (let o = valueStart; o + 4 <= Math.min(valueStart + valueBytes, end); o += 4) {
      pairs.push(`0x${data.readUInt16LE(o).toString(16).padStart(4, '0')} 0x${data.readUInt16LE(o + 2).toString(16).padStart(4, '0')}`);
    }
    out.push({ name: 'Translation', value: pairs.join(' ') });
    return;
  }
  let child = align4(valueStart + valueBytes);
  while (child + 6 <= end) {
    const childLength = data.readUInt16LE(child);
    if (childLength === 0) break;
    walkVersionBlock(data, child, end, [...path, key], out, depth + 1);
    child = align4(child + childLength);
  }
}

const align4 = (value: number) => (value + 3) & ~3;

async function readPdbPath(layout: Layout): Promise<string | null> {
  const directory = layout.directories[6]!;
  if (directory.rva === 0) return null;
  const table = await readAt(layout, directory.rva, Math.min(directory.size, 28 * 64));
  for (let o = 0; o + 28 <= table.length; o += 28) {
    if (table.readUInt32LE(o + 12) !== 2) continue;
    const record = await layout.reader.read(table.readUInt32LE(o + 24), Math.min(table.readUInt32LE(o + 16), 4096));
    if (record.length > 24 && record.toString('latin1', 0, 4) === 'RSDS') return cString(record, 24, 'utf8');
    if (record.length > 16 && record.toString('latin1', 0, 4) === 'NB10') return cString(record, 16, 'utf8');
  }
  return null;
}

/** Certificates of the Authenticode signature (WIN_CERTIFICATE entries holding PKCS#7 SignedData). */
async function readCertificates(reader: BinaryReader, offset: number, size: number): Promise<PeCertificate[]> {
  const table = await reader.read(offset, Math.min(size, 4 << 20));
  const certificates: PeCertificate[] = [];
  for (let o = 0; o + 8 <= table.length; ) {
    const length = table.readUInt32LE(o);
    const type = table.readUInt16LE(o + 6);
    if (length < 8) break;
    if (type === 2) {
      for (const der of certificatesOfPkcs7(table.subarray(o + 8, Math.min(o + length, table.length)))) {
        try {
          certificates.push(describeCertificate(new X509Certificate(der)));
        } catch {
          // A certificate node cannot parse is skipped; the signature's presence is still reported.
        }
      }
    }
    o += align8(length);
  }
  return certificates;
}

const align8 = (value: number) => (value + 7) & ~7;

function describeCertificate(certificate: X509Certificate): PeCertificate {
  const field = (name: string) => {
    const line = certificate.subject.split('\n').find((entry) => entry.startsWith(`${name}=`));
    return line === undefined ? null : line.slice(name.length + 1);
  };
  return {
    common_name: field('CN'),
    organization: field('O'),
    locality: field('L'),
    country: field('C'),
    email: field('emailAddress'),
    serial_number: certificate.serialNumber.toLowerCase(),
    issuer: certificate.issuer.split('\n').join(', '),
    subject: certificate.subject.split('\n').join(', '),
    valid_from: certificate.validFrom,
    valid_to: certificate.validTo,
    sha1: certificate.fingerprint.replace(/:/g, '').toLowerCase(),
    sha256: certificate.fingerprint256.replace(/:/g, '').toLowerCase(),
  };
}

function flagNames(value: number, table: Array<[number, string]>): string[] {
  return table.filter(([bit]) => (value & bit) !== 0).map(([, name]) => name);
}
