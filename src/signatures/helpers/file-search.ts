import { createReadStream } from 'node:fs';
import { open } from 'node:fs/promises';

/**
 * Which of the needles occur in a file, reading it in chunks so that captures of any size stay cheap on
 * memory. Stops at maxBytes. A missing or unreadable file contains nothing.
 */
export async function needlesInFile(path: string, needles: readonly string[], maxBytes = 512 * 1024 * 1024): Promise<Set<string>> {
  const wanted = needles.map((needle) => ({ needle, bytes: Buffer.from(needle) }));
  const overlap = Math.max(0, ...wanted.map((item) => item.bytes.length - 1));
  const found = new Set<string>();
  let tail: Buffer = Buffer.alloc(0);
  try {
    for await (const chunk of createReadStream(path, { end: maxBytes - 1, highWaterMark: 1 << 20 }) as AsyncIterable<Buffer>) {
      const window = tail.length > 0 ? Buffer.concat([tail, chunk]) : chunk;
      for (const { needle, bytes } of wanted) if (!found.has(needle) && window.includes(bytes)) found.add(needle);
      if (found.size === wanted.length) break;
      tail = window.subarray(Math.max(0, window.length - overlap));
    }
  } catch (error) {
    if (!isMissing(error)) throw error;
  }
  return found;
}

/** The first bytes of a file (fewer when it is shorter), or null when it cannot be read. */
export async function headOf(path: string, length: number): Promise<Buffer | null> {
  try {
    const handle = await open(path, 'r');
    try {
      const buffer = Buffer.alloc(length);
      const { bytesRead } = await handle.read(buffer, 0, length, 0);
      return buffer.subarray(0, bytesRead);
    } finally {
      await handle.close();
    }
  } catch (error) {
    if (isMissing(error)) return null;
    throw error;
  }
}

function isMissing(error: unknown): boolean {
  const code = (error as NodeJS.ErrnoException).code;
  return code === 'ENOENT' || code === 'EISDIR' || code === 'ENOTDIR' || code === 'EACCES';
}
