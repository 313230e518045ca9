import { constants } from 'node:fs';
import { lstat, open, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { internal } from '../../errors.js';

/**
 * Host path of a path inside the machine's merged root, for the host's own reads and writes there.
 * A machine restored from an earlier task's end state may hold symlinks planted by a sample (e.g.
 * /tmp -> /); the host would follow them into its own filesystem, so every folder on the way must be a
 * real folder. Only called while nothing runs in the machine, so the check cannot be raced.
 */
export async function hostPathInMachine(root: string, inMachine: string, { isFolder = false } = {}): Promise<string> {
  const parts = inMachine.split('/').filter(Boolean);
  let current = root;
  for (const part of isFolder ? parts : parts.slice(0, -1)) {
    current = join(current, part);
    const stat = await lstat(current).catch(() => null);
    if (!stat?.isDirectory()) {
      throw internal(`${inMachine} is not reachable inside the machine without following a link`, { context: { inMachine } });
    }
  }
  return join(root, ...parts);
}

/** Whether something (a file, a link) is at this path of the machine; false when a link is on the way. */
export async function existsInMachine(root: string, inMachine: string): Promise<boolean> {
  const target = await hostPathInMachine(root, inMachine).catch(() => null);
  return target !== null && (await lstat(target).then(() => true, () => false));
}

/**
 * Writes a file inside the machine without following a link at its place, owned by `owner` (the host id
 * of the machine's root), so that the sample, root inside, owns it as it would a file it downloaded.
 */
export async function writeInMachine(root: string, inMachine: string, data: Buffer, mode: number, owner: number): Promise<void> {
  const target = await hostPathInMachine(root, inMachine);
  const handle = await open(target, constants.O_WRONLY | constants.O_CREAT | constants.O_TRUNC | constants.O_NOFOLLOW, mode);
  try {
    await handle.writeFile(data);
    await handle.chown(owner, owner);
    await handle.chmod(mode);
  } finally {
    await handle.close();
  }
}

/**
 * Makes sure each path is a regular file of the machine (an empty one if it was not): the sandbox binds
 * files over them, which fails on a link or folder a sample may have left in a reboot task's state.
 */
export async function ensureRegularFiles(root: string, paths: string[], owner: number): Promise<void> {
  for (const inMachine of paths) {
    const target = await hostPathInMachine(root, inMachine);
    const stat = await lstat(target).catch(() => null);
    if (stat?.isFile()) continue;
    if (stat) await rm(target, { recursive: true, force: true });
    const handle = await open(target, constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW, 0o644);
    await handle.chown(owner, owner).finally(() => handle.close());
  }
}
