import { spawn } from 'node:child_process';
import { readdir, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { PassThrough, type Readable } from 'node:stream';
import { internal } from '../errors.js';

export type TarCompression = 'bz2' | 'gz' | 'none';

export interface TarFolderOptions {
  compression: TarCompression;
  /** Which top-level entries of the folder go in; everything below a chosen folder follows it. */
  includeTopLevel?: (name: string) => boolean;
}

const COMPRESSION_FLAG: Record<TarCompression, string[]> = { bz2: ['-j'], gz: ['-z'], none: [] };

/**
 * Streams a folder as a tar archive made by the system `tar`, so nothing is built in memory. Members are
 * named relative to the folder. Only the top-level `binary` link is followed (it points to the sample in
 * storage/binaries); any other link, dangling `binary` included, is left out, so the archive can hold
 * nothing from outside the folder. The stream fails (and the download is cut short) if `tar` fails.
 * Rejects with ENOENT when the folder does not exist.
 */
export async function tarFolder(dir: string, options: TarFolderOptions): Promise<Readable> {
  const members = await collectMembers(dir, options.includeTopLevel ?? (() => true));
  const child = spawn(
    'tar',
    [
      '-c', ...COMPRESSION_FLAG[options.compression], '-f', '-', '-C', dir,
      '--dereference', '--no-recursion', '--null', '--verbatim-files-from', '--ignore-failed-read', '-T', '-',
    ],
    { stdio: ['pipe', 'pipe', 'pipe'] },
  );
  const output = new PassThrough();
  let stderr = '';
  child.stderr.setEncoding('utf8').on('data', (text: string) => (stderr = (stderr + text).slice(-4000)));
  child.stdout.pipe(output, { end: false });
  child.stdin.on('error', () => {}); // tar exiting early is reported through its exit status
  child.stdin.end(members.map((name) => `${name}\0`).join(''));
  child.on('error', (error) => output.destroy(internal('cannot run tar', { cause: error, context: { dir } })));
  child.on('close', (code, signal) => {
    // 1 means a file changed while it was read: the archive is still complete and valid.
    if (code === 0 || code === 1) output.end();
    else output.destroy(internal('tar failed', { context: { dir, code, signal, stderr } }));
  });
  output.on('close', () => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
  });
  return output;
}

/** Folders, regular files and the top-level `binary` link if it leads to a file, sorted; tar adds each by name. */
async function collectMembers(dir: string, includeTopLevel: (name: string) => boolean): Promise<string[]> {
  const members: string[] = [];
  const top = await readdir(dir, { withFileTypes: true });
  for (const entry of sortByName(top)) {
    if (!includeTopLevel(entry.name)) continue;
    if (entry.isSymbolicLink() && entry.name === 'binary') {
      if (await isFile(join(dir, entry.name))) members.push(entry.name);
    } else {
      await addEntry(dir, entry.name, entry, members);
    }
  }
  return members;
}

async function addEntry(root: string, name: string, entry: { isFile(): boolean; isDirectory(): boolean }, members: string[]) {
  if (entry.isFile()) members.push(name);
  if (!entry.isDirectory()) return;
  members.push(name);
  const children = await readdir(join(root, name), { withFileTypes: true }).catch(() => []);
  for (const child of sortByName(children)) await addEntry(root, `${name}/${child.name}`, child, members);
}

function sortByName<T extends { name: string }>(entries: T[]): T[] {
  return entries.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
}

async function isFile(path: string): Promise<boolean> {
  return stat(path).then((stats) => stats.isFile(), () => false);
}
