import { createHash } from 'node:crypto';
import { constants, createWriteStream } from 'node:fs';
import { open } from 'node:fs/promises';
import { Readable, Transform } from 'node:stream';
import { pipeline } from 'node:stream/promises';

export interface CopiedHead {
  /** Bytes copied: `bytes` or fewer, if the file is shorter. */
  bytes: number;
  /** SHA-256 of the bytes copied. */
  sha256: string;
}

/**
 * Copies the first `bytes` bytes of `source` to `target`, hashing them on the way. It streams, so a
 * file of any size costs a few chunks of memory.
 */
export async function copyHead(source: string, target: string, bytes: number): Promise<CopiedHead> {
  const hash = createHash('sha256');
  let copied = 0;
  const hashing = new Transform({
    transform(chunk: Buffer, _encoding, done) {
      hash.update(chunk);
      copied += chunk.length;
      done(null, chunk);
    },
  });
  await pipeline(await readHead(source, bytes), hashing, createWriteStream(target, { mode: 0o644 }));
  return { bytes: copied, sha256: hash.digest('hex') };
}

async function readHead(source: string, bytes: number): Promise<Readable> {
  // A read stream's `end` is inclusive and cannot say "no bytes".
  if (bytes === 0) return Readable.from([]);
  // No link is followed, and no FIFO can block the open: the disk is the sample's.
  const handle = await open(source, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK);
  return handle.createReadStream({ start: 0, end: bytes - 1 });
}
