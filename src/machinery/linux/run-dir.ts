import { constants } from 'node:fs';
import { chmod, mkdir, stat } from 'node:fs/promises';
import { basename, dirname } from 'node:path';
import { unavailable } from '../../errors.js';

/**
 * Machines' run folders hold their disks, which bubblewrap binds as the sandbox's root while it runs as
 * the machine's root, an unprivileged host id. So the folders on the way may be passed through by
 * anyone (mode 0711) but listed only by host root.
 */
const RUN_DIR_MODE = 0o711;

export async function makeRunDir(runDir: string): Promise<void> {
  await makeMachineDir(runDir);
  // nestbox's own folder above it (/run/nestbox, shared with the task networks) is opened the same way;
  // any other folder on the way is the operator's, and is only checked.
  const parent = dirname(runDir);
  if (basename(parent).startsWith('nestbox')) await chmod(parent, (await stat(parent)).mode | constants.S_IXOTH);
  await ensureTraversable(runDir);
}

/** A folder, and every folder above it, may be passed through by any user; otherwise start-up fails and says where. */
export async function ensureTraversable(path: string): Promise<void> {
  for (let folder = path; ; folder = dirname(folder)) {
    const { mode } = await stat(folder);
    if ((mode & constants.S_IXOTH) === 0) {
      throw unavailable(`${folder} must be searchable by other users (chmod o+x): machines run as unprivileged host ids`, { context: { folder } });
    }
    if (folder === dirname(folder)) return;
  }
}

/** A run folder (the machines', or one machine's own): made by host root, passed through by the machine's root. */
export async function makeMachineDir(dir: string): Promise<void> {
  await mkdir(dir, { recursive: true, mode: RUN_DIR_MODE });
  await chmod(dir, RUN_DIR_MODE);
}
