import { open, readFile } from 'node:fs/promises';

/**
 * Process memory dumps in the layout Cuckoo's process dumps use, so its readers work: for each region a
 * 24-byte little-endian header (address u64, size u32, state u32, type u32, protect u32) followed by
 * the region's bytes. Regions that cannot be read (guard pages, device mappings) are skipped. User-space
 * addresses stay below 2^47, so they are exact as JavaScript numbers.
 */
const MEM_COMMIT = 0x1000;
const MEM_PRIVATE = 0x20000;
const MEM_MAPPED = 0x40000;
const MEM_IMAGE = 0x1000000;
const CHUNK = 1 << 20;

interface Region {
  start: bigint;
  end: bigint;
  perms: string;
  path: string;
}

function parseMaps(text: string): Region[] {
  return text
    .split('\n')
    .filter(Boolean)
    .map((line) => {
      const [range = '', perms = '', , , inode = '0', ...rest] = line.split(/\s+/);
      const [start = '0', end = '0'] = range.split('-');
      return { start: BigInt(`0x${start}`), end: BigInt(`0x${end}`), perms, path: inode === '0' && !rest.join(' ') ? '' : rest.join(' ') };
    });
}

/** Windows PAGE_* protection of a region, the vocabulary of Cuckoo's dump headers. */
function protection(perms: string): number {
  const [r, w, x] = [perms[0] === 'r', perms[1] === 'w', perms[2] === 'x'];
  if (x) return w ? 0x40 : r ? 0x20 : 0x10;
  if (w) return 0x04;
  return r ? 0x02 : 0x01;
}

function regionType(region: Region): number {
  if (region.path.startsWith('/')) return MEM_IMAGE;
  return region.perms[3] === 's' ? MEM_MAPPED : MEM_PRIVATE;
}

function header(address: bigint, size: number, region: Region): Buffer {
  const buffer = Buffer.alloc(24);
  buffer.writeBigUInt64LE(address, 0);
  buffer.writeUInt32LE(size, 8);
  buffer.writeUInt32LE(MEM_COMMIT, 12);
  buffer.writeUInt32LE(regionType(region), 16);
  buffer.writeUInt32LE(protection(region.perms), 20);
  return buffer;
}

/**
 * Dumps the readable memory of `pid` into `outPath`. Freeze the process's cgroup first for a
 * consistent picture. Returns the bytes of memory written, or null when the process is gone.
 */
export async function dumpProcessMemory(pid: number, outPath: string): Promise<{ bytes: number; regions: number } | null> {
  let maps: string;
  let memory;
  try {
    maps = await readFile(`/proc/${pid}/maps`, 'utf8');
    memory = await open(`/proc/${pid}/mem`, 'r');
  } catch {
    return null;
  }
  const out = await open(outPath, 'w');
  let bytes = 0;
  let regions = 0;
  try {
    for (const region of parseMaps(maps)) {
      if (region.perms[0] !== 'r' || region.path === '[vvar]' || region.path === '[vsyscall]') continue;
      // Consecutive readable chunks become one dumped region; an unreadable chunk splits it.
      let runStart = region.start;
      let run: Buffer[] = [];
      const flush = async () => {
        const size = run.reduce((sum, chunk) => sum + chunk.length, 0);
        if (size > 0) {
          await out.write(header(runStart, size, region));
          for (const chunk of run) await out.write(chunk);
          bytes += size;
          regions++;
        }
        run = [];
      };
      for (let address = region.start; address < region.end; address += BigInt(CHUNK)) {
        const length = Number(region.end - address < BigInt(CHUNK) ? region.end - address : BigInt(CHUNK));
        const chunk = Buffer.alloc(length);
        const read = await memory.read(chunk, 0, length, Number(address)).then(
          (result) => result.bytesRead,
          () => 0,
        );
        if (read === length && run.reduce((sum, c) => sum + c.length, 0) + length <= 0xffff_ffff) {
          run.push(chunk);
          continue;
        }
        await flush();
        if (read === length) run.push(chunk);
        runStart = read === length ? address : address + BigInt(length);
      }
      await flush();
    }
  } finally {
    await memory.close();
    await out.close();
  }
  return { bytes, regions };
}
