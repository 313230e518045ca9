import { constants } from 'node:fs';
import { type FileHandle, open } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import { Readable } from 'node:stream';
import type { FastifyReply } from 'fastify';
import { invalidInput, notFound } from '../errors.js';

/** Answers that send a stored file: artifacts, screenshots and reports. */

/** `folder/name`, checked once more to be directly inside the folder. */
export function fileIn(folder: string, name: string): string {
  const path = join(folder, name);
  if (dirname(path) !== folder || basename(path) !== name) throw invalidInput('Invalid file name', { context: { folder, name } });
  return path;
}

/**
 * Streams a regular file from disk with its length. The last path component is never followed if it is
 * a symbolic link; a missing file, a folder or a link answer 404 with `notFoundMessage`.
 */
export async function sendFile(reply: FastifyReply, path: string, contentType: string, notFoundMessage: string) {
  const { handle, size } = await openStoredFile(path, notFoundMessage);
  reply.type(contentType).header('content-length', size);
  if (reply.request.method === 'HEAD') {
    await handle.close();
    return sendNoBody(reply);
  }
  return reply.send(handle.createReadStream());
}

/**
 * Opens a stored regular file without following a symbolic link in its last component; a missing file,
 * a folder or a link is a not_found error with `notFoundMessage`.
 */
export async function openStoredFile(path: string, notFoundMessage: string): Promise<{ handle: FileHandle; size: number }> {
  const handle = await open(path, constants.O_RDONLY | constants.O_NOFOLLOW).catch((error: NodeJS.ErrnoException) => {
    if (['ENOENT', 'ENOTDIR', 'ELOOP', 'EISDIR'].includes(error.code ?? '')) return undefined;
    throw error;
  });
  if (!handle) throw notFound(notFoundMessage, { context: { path } });
  try {
    const stats = await handle.stat();
    if (!stats.isFile()) throw notFound(notFoundMessage, { context: { path } });
    return { handle, size: stats.size };
  } catch (error) {
    await handle.close();
    throw error;
  }
}

/**
 * Answers a HEAD request to a download route with the headers already set. Fastify would otherwise read
 * (and throw away) the whole stream the GET handler makes, archives and large dumps included.
 */
export function sendNoBody(reply: FastifyReply) {
  return reply.send(Readable.from([]));
}
