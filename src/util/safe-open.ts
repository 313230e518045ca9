import { constants } from 'node:fs';
import { type FileHandle, lstat, open } from 'node:fs/promises';
import { internal } from '../errors.js';

/**
 * Opens a file of an analysis folder without following a symbolic link and refuses anything that is
 * not a regular file, so a planted link or FIFO can neither expose host files nor hang processing.
 */
export async function openRegularFile(path: string): Promise<FileHandle> {
  const handle = await open(path, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK);
  const stats = await handle.stat();
  if (!stats.isFile()) {
    await handle.close();
    throw internal(`not a regular file: ${path}`, { context: { path } });
  }
  return handle;
}

/** True for a regular file (not a link, folder or device) at `path`. */
export async function isRegularFile(path: string): Promise<boolean> {
  return (await lstat(path).catch(() => undefined))?.isFile() ?? false;
}
