import { open, unlink } from 'node:fs/promises';
import { tooLarge } from '../errors.js';
import { BufferRelease } from './buffer-release.js';
import { type FileHashes, MultiHasher } from './hashing.js';

export interface WriteLimits {
  /** Most bytes accepted; more is refused with a too_large error and nothing is left on disk. */
  limit: number;
  /** An upper bound on the length the source promises (e.g. from Content-Length); speeds up ssdeep. */
  expectedMax?: number;
  /** Named in the too_large message. */
  what?: string;
  /** The error for going over `limit` when it is not api.upload_limit. */
  refusal?: () => Error;
}

/**
 * Streams `source` into a new file at `path` (which must not exist), computing every hash in the same
 * pass, so no upload is ever held in memory. On any failure the partial file is removed.
 */
export async function writeHashedFile(source: AsyncIterable<Uint8Array>, path: string, limits: WriteLimits): Promise<FileHashes> {
  const bound = limits.expectedMax === undefined ? undefined : Math.min(limits.expectedMax, limits.limit);
  const hasher = new MultiHasher(bound);
  const file = await open(path, 'wx', 0o640);
  const release = new BufferRelease();
  let written = 0;
  try {
    for await (const chunk of source) {
      written += chunk.length;
      if (written > limits.limit) throw overLimit(limits, path);
      hasher.update(chunk);
      await file.write(chunk);
      release.add(chunk.length);
    }
    await file.close();
    return hasher.digest();
  } catch (error) {
    await file.close().catch(() => undefined);
    await removeFile(path);
    throw error;
  }
}

/** A multipart file stream from busboy: it stops at the size limit and says so in `truncated`. */
export interface MultipartFileStream extends AsyncIterable<Uint8Array> {
  truncated?: boolean;
}

/** Saves one multipart file part to `path`; a part cut off by the parser's size limit is refused (413). */
export async function saveFilePart(file: MultipartFileStream, path: string, limits: WriteLimits): Promise<FileHashes> {
  const hashes = await writeHashedFile(file, path, limits);
  if (file.truncated) {
    await removeFile(path);
    throw overLimit(limits, path);
  }
  return hashes;
}

function overLimit(limits: WriteLimits, path: string) {
  if (limits.refusal) return limits.refusal();
  return tooLarge(`${limits.what ?? 'The uploaded file'} is larger than the limit of ${limits.limit} bytes (api.upload_limit)`, {
    context: { path, limit: limits.limit },
  });
}

/** Removes one file if it is there; cheaper than rm(), which looks at the path first. */
export async function removeFile(path: string): Promise<void> {
  try {
    await unlink(path);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
  }
}
