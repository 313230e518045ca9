import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { BinaryReader, hex } from '../../formats/binary-reader.js';
import { isRegularFile } from '../../util/safe-open.js';
import { fanOut, scanFile, StringCollector, StringScanner, UrlCollector } from '../strings.js';
import type { ProcessingModule } from '../types.js';

/**
 * Process memory dumps memory/<pid>.dmp (or <pid>-<n>.dmp): regions, strings, URLs and YARA matches.
 * Dumps in Cuckoo's process-dump layout (per region a 24-byte header: address u64, size u32, state,
 * type, protection, then the bytes) give their regions; a raw dump gives them from a /proc/PID/maps
 * style sidecar <name>.maps listing the dumped regions in dump order.
 */

const MAX_REGIONS = 10000;
const DUMP_NAME = /^(\d+)(?:-(\d+))?\.dmp$/;

export interface MemoryRegion {
  addr: string;
  end: string;
  size: number;
  /** Where the region's bytes start in the dump. */
  offset: number;
  protect: string;
  state?: string;
  type?: string;
  path?: string;
}

const PROTECTIONS: Record<number, string> = {
  0x01: 'PAGE_NOACCESS',
  0x02: 'PAGE_READONLY',
  0x04: 'PAGE_READWRITE',
  0x08: 'PAGE_WRITECOPY',
  0x10: 'PAGE_EXECUTE',
  0x20: 'PAGE_EXECUTE_READ',
  0x40: 'PAGE_EXECUTE_READWRITE',
  0x80: 'PAGE_EXECUTE_WRITECOPY',
};
const STATES: Record<number, string> = { 0x1000: 'MEM_COMMIT', 0x2000: 'MEM_RESERVE', 0x10000: 'MEM_FREE' };
const TYPES: Record<number, string> = { 0x20000: 'MEM_PRIVATE', 0x40000: 'MEM_MAPPED', 0x1000000: 'MEM_IMAGE' };

export const procmemoryModule: ProcessingModule<'procmemory'> = {
  key: 'procmemory',
  async run(input) {
    const names = await readdir(input.paths.memory).catch(() => [] as string[]);
    const candidates = names
      .map((name) => ({ name, match: DUMP_NAME.exec(name) }))
      .filter((entry): entry is { name: string; match: RegExpExecArray } => entry.match !== null)
      .map(({ name, match }) => ({ name, path: join(input.paths.memory, name), pid: Number(match[1]), num: Number(match[2] ?? 1) }))
      .sort((a, b) => a.pid - b.pid || a.num - b.num);
    const dumps = [];
    for (const dump of candidates) if (await isRegularFile(dump.path)) dumps.push(dump);
    if (dumps.length === 0) return undefined;
    const yara = await input.tools.yara.scanMany(dumps.map((dump) => dump.path));
    const entries: Array<Record<string, unknown>> = [];
    for (const dump of dumps) {
      const strings = new StringCollector();
      const urls = new UrlCollector();
      await scanFile(dump.path, new StringScanner(fanOut(strings.sink, urls.sink)));
      entries.push({
        file: dump.path,
        pid: dump.pid,
        num: dump.num,
        yara: yara.get(dump.path) ?? [],
        urls: urls.result(),
        regions: (await dumpRegions(dump.path)) ?? (await sidecarRegions(dump.path.replace(/\.dmp$/, '.maps'))),
        strings: strings.result(),
      });
    }
    return entries;
  },
};

/** Regions of a Cuckoo-layout dump, or undefined when the file does not follow that layout throughout. */
export async function dumpRegions(path: string): Promise<MemoryRegion[] | undefined> {
  const reader = await BinaryReader.open(path);
  try {
    const regions: MemoryRegion[] = [];
    let offset = 0;
    while (offset < reader.size) {
      const header = await reader.read(offset, 24);
      if (header.length < 24) return undefined;
      const address = header.readBigUInt64LE(0);
      const size = header.readUInt32LE(8);
      const state = header.readUInt32LE(12);
      if (size === 0 || offset + 24 + size > reader.size || STATES[state] === undefined || address >= 1n << 57n) return undefined;
      if (regions.length < MAX_REGIONS) {
        regions.push({
          addr: hex(address),
          end: hex(address + BigInt(size)),
          size,
          offset: offset + 24,
          protect: PROTECTIONS[header.readUInt32LE(20)] ?? hex(header.readUInt32LE(20)),
          state: STATES[state],
          type: TYPES[header.readUInt32LE(16)] ?? hex(header.readUInt32LE(16)),
        });
      }
      offset += 24 + size;
    }
    return regions;
  } finally {
    await reader.close();
  }
}

/** Regions from a maps sidecar (`start-end perms offset dev inode path`), laid end to end in the dump. */
async function sidecarRegions(path: string): Promise<MemoryRegion[]> {
  const text = await readFile(path, 'utf8').catch(() => '');
  const regions: MemoryRegion[] = [];
  let offset = 0;
  for (const line of text.split('\n')) {
    const match = /^([0-9a-f]+)-([0-9a-f]+)\s+(\S{4})\s+\S+\s+\S+\s+\S+\s*(.*)$/i.exec(line.trim());
    if (!match || regions.length >= MAX_REGIONS) continue;
    const start = BigInt(`0x${match[1]}`);
    const end = BigInt(`0x${match[2]}`);
    const size = Number(end - start);
    regions.push({ addr: hex(start), end: hex(end), size, offset, protect: match[3]!, path: match[4] ?? '' });
    offset += size;
  }
  return regions;
}
