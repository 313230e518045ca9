import type { FileHandle } from 'node:fs/promises';
import { openRegularFile } from '../util/safe-open.js';

/** Largest single read a parser may ask for; hostile headers cannot make us allocate more. */
const MAX_READ = 64 << 20;

/**
 * Random access to a file for the format parsers (ELF, PE): reads are clamped to the file, so offsets
 * and sizes taken from untrusted headers give short buffers, never errors or huge allocations.
 */
export class BinaryReader {
  private constructor(
    private readonly handle: FileHandle,
    readonly size: number,
  ) {}

  static async open(path: string): Promise<BinaryReader> {
    const handle = await openRegularFile(path);
    const { size } = await handle.stat();
    return new BinaryReader(handle, size);
  }

  async read(offset: number | bigint, length: number | bigint): Promise<Buffer> {
    const start = Number(offset);
    if (!Number.isSafeInteger(start) || start < 0 || start >= this.size) return Buffer.alloc(0);
    const wanted = Math.min(Number(length), this.size - start, MAX_READ);
    if (!(wanted > 0)) return Buffer.alloc(0);
    const buffer = Buffer.alloc(wanted);
    const { bytesRead } = await this.handle.read(buffer, 0, wanted, start);
    return buffer.subarray(0, bytesRead);
  }

  close(): Promise<void> {
    return this.handle.close();
  }
}

/** A NUL-terminated string at `offset` of a string table ('' when out of range). */
export function cString(table: Buffer, offset: number, encoding: BufferEncoding = 'latin1'): string {
  if (offset < 0 || offset >= table.length) return '';
  const end = table.indexOf(0, offset);
  return table.toString(encoding, offset, end < 0 ? table.length : end);
}

export const hex = (value: number | bigint) => `0x${value.toString(16)}`;

/** Shannon entropy in bits per byte (0 to 8). */
export function entropy(data: Uint8Array): number {
  if (data.length === 0) return 0;
  const counts = new Array<number>(256).fill(0);
  for (const byte of data) counts[byte]!++;
  let sum = 0;
  for (const count of counts) {
    if (count === 0) continue;
    const p = count / data.length;
    sum -= p * Math.log2(p);
  }
  return sum;
}
