import { chmod, lchown, lstat, readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { hostIdOf, type HostIdRange } from './host-ids.js';

const SET_ID_BITS = 0o6000;

/**
 * Gives every file of a tree to the machine's ids: a file owned by uid 0 becomes the range's base, and so
 * on, so that inside the machine it shows its usual owner and root may change it. Links are changed
 * themselves, never followed. A change of owner clears setuid and setgid bits: they are put back, so the
 * guest looks like any Debian system (no_new_privs keeps them from granting anything). Files already in
 * the range are left as they are. Returns how many entries were changed.
 */
export async function shiftOwnership(root: string, range: HostIdRange): Promise<number> {
  let changed = 0;
  const folders = [root];
  while (folders.length > 0) {
    const folder = folders.pop()!;
    if (await shiftOne(folder, range)) changed++;
    const entries = await readdir(folder, { withFileTypes: true });
    const files = entries.filter((entry) => !entry.isDirectory()).map((entry) => join(folder, entry.name));
    folders.push(...entries.filter((entry) => entry.isDirectory()).map((entry) => join(folder, entry.name)));
    const results = await Promise.all(files.map((file) => shiftOne(file, range)));
    changed += results.filter(Boolean).length;
  }
  return changed;
}

async function shiftOne(path: string, range: HostIdRange): Promise<boolean> {
  const stat = await lstat(path);
  const inRange = (id: number) => id >= range.base && id < range.base + range.count;
  if (inRange(stat.uid) && inRange(stat.gid)) return false;
  const uid = inRange(stat.uid) ? stat.uid : hostIdOf(range, stat.uid);
  const gid = inRange(stat.gid) ? stat.gid : hostIdOf(range, stat.gid);
  await lchown(path, uid, gid);
  if (!stat.isSymbolicLink() && !stat.isDirectory() && stat.mode & SET_ID_BITS) await chmod(path, stat.mode & 0o7777);
  return true;
}
