import { constants } from 'node:fs';
import { lstat, open } from 'node:fs/promises';
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

/** Writes a file inside the machine without following a link at its place. */
export async function writeInMachine(root: string, inMachine: string, data: Buffer, mode: number): Promise<void> {
  const target = await hostPathInMachine(root, inMachine);
  const handle = await open(target, constants.O_WRONLY | constants.O_CREAT | constants.O_TRUNC | constants.O_NOFOLLOW, mode);
  try {
    await handle.writeFile(data);
    await handle.chmod(mode);
  } finally {
    await handle.close();
  }
}
