import { type FileHandle, open, unlink, writeFile } from 'node:fs/promises';
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
  return (await receiveFile(source, path, limits, 0)).hashes;
}

export interface ReceivedContent {
  hashes: FileHashes;
  /** The whole content, when it fitted in `holdUpTo` bytes: then nothing was written to `path`. */
  content?: Buffer;
}

/**
 * Like writeHashedFile, but a source of at most `holdUpTo` bytes is kept in memory instead: a caller
 * that learns from the hashes that the content is stored already never writes it at all.
 */
export async function receiveFile(
  source: AsyncIterable<Uint8Array>,
  path: string,
  limits: WriteLimits,
  holdUpTo: number,
): Promise<ReceivedContent> {
  const bound = limits.expectedMax === undefined ? undefined : Math.min(limits.expectedMax, limits.limit);
  const hasher = new MultiHasher(bound);
  const release = new BufferRelease();
  const held: Uint8Array[] = [];
  let file: FileHandle | undefined;
  let received = 0;
  try {
    for await (const chunk of source) {
      received += chunk.length;
      if (received > limits.limit) throw overLimit(limits, path);
      hasher.update(chunk);
      if (file === undefined && received <= holdUpTo) {
        held.push(chunk);
        continue;
      }
      file ??= await createWith(path, held);
      await file.write(chunk);
      release.add(chunk.length);
    }
    if (file === undefined && holdUpTo > 0) return { hashes: hasher.digest(), content: Buffer.concat(held) };
    file ??= await createWith(path, held);
    await file.close();
    return { hashes: hasher.digest() };
  } catch (error) {
    if (file !== undefined) {
      await file.close().catch(() => undefined);
      await removeFile(path);
    }
    throw error;
  }
}

async function createWith(path: string, held: readonly Uint8Array[]): Promise<FileHandle> {
  const file = await open(path, 'wx', 0o640);
  try {
    if (held.length > 0) await file.write(Buffer.concat(held));
    return file;
  } catch (error) {
    await file.close().catch(() => undefined);
    await removeFile(path);
    throw error;
  }
}

/** Writes content held in memory by receiveFile to its path (which must not exist). */
export async function writeHeld(path: string, content: Uint8Array): Promise<void> {
  await writeFile(path, content, { flag: 'wx', mode: 0o640 });
}

/** A multipart file stream from busboy: it stops at the size limit and says so in `truncated`. */
export interface MultipartFileStream extends AsyncIterable<Uint8Array> {
  truncated?: boolean;
}

/**
 * Receives one multipart file part (see receiveFile); a part cut off by the parser's size limit is
 * refused (413) and leaves nothing behind.
 */
export async function saveFilePart(file: MultipartFileStream, path: string, limits: WriteLimits, holdUpTo = 0): Promise<ReceivedContent> {
  const received = await receiveFile(file, path, limits, holdUpTo);
  if (file.truncated) {
    if (received.content === undefined) await removeFile(path);
    throw overLimit(limits, path);
  }
  return received;
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
