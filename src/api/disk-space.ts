import { statfs } from 'node:fs/promises';

/** Total, free and used bytes of the file system of each folder. */
export async function diskSpace(dirs: Record<string, string>) {
  const result: Record<string, { total: number; free: number; used: number }> = {};
  for (const [key, dir] of Object.entries(dirs)) {
    try {
      const stats = await statfs(dir);
      result[key] = {
        total: stats.blocks * stats.bsize,
        free: stats.bavail * stats.bsize,
        used: (stats.blocks - stats.bavail) * stats.bsize,
      };
    } catch {
      // A missing folder is left out, as Cuckoo does.
    }
  }
  return result;
}
