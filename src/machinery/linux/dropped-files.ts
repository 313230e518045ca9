import { createHash } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { copyFile, lstat, mkdir, readdir } from 'node:fs/promises';
import { basename, join } from 'node:path';

/**
 * Dropped files: every regular file the sample created or changed is in the overlay's upper directory.
 * Each is copied into the analysis folder's `files/` as `<first 16 hex of its sha256>_<name>`, with one
 * files.json line per file, as Cuckoo's result server records uploads.
 */
export interface DroppedFile {
  /** Path inside the machine. */
  filepath: string;
  sha256: string;
  /** Relative to the analysis folder: files/<name>. */
  path: string;
}

export interface FilesJsonLine {
  path: string;
  filepath: string | null;
  pids: number[];
}

export async function sha256File(path: string): Promise<string> {
  const hash = createHash('sha256');
  for await (const chunk of createReadStream(path)) hash.update(chunk as Buffer);
  return hash.digest('hex');
}

/** Regular files of the upper directory: machine path -> host path. */
export async function upperFiles(upper: string): Promise<Map<string, string>> {
  const files = new Map<string, string>();
  const walk = async (dir: string, inMachine: string): Promise<void> => {
    for (const entry of await readdir(dir, { withFileTypes: true }).catch(() => [])) {
      const host = join(dir, entry.name);
      const machine = `${inMachine}/${entry.name}`;
      if (entry.isDirectory()) await walk(host, machine);
      else if (entry.isFile()) files.set(machine, host);
    }
  };
  await walk(upper, '');
  return files;
}

/** Hashes of the upper directory's files, taken before the sample starts, so our own files can be left out. */
export async function snapshotUpper(upper: string): Promise<Map<string, string>> {
  const snapshot = new Map<string, string>();
  for (const [machinePath, hostPath] of await upperFiles(upper)) snapshot.set(machinePath, await sha256File(hostPath));
  return snapshot;
}

export interface CollectDroppedOptions {
  upper: string;
  /** The analysis folder's files/ folder. */
  filesDir: string;
  /** Files present before the sample ran, with their hashes: kept out unless the sample changed them. */
  baseline: Map<string, string>;
  /** Machine paths that are ours (a tracer's log), never dropped files. */
  exclude: Set<string>;
  maxFiles: number;
}

export async function collectDroppedFiles({ upper, filesDir, baseline, exclude, maxFiles }: CollectDroppedOptions): Promise<{ dropped: DroppedFile[]; skipped: number }> {
  await mkdir(filesDir, { recursive: true });
  const dropped: DroppedFile[] = [];
  let skipped = 0;
  const entries = [...(await upperFiles(upper))].sort(([a], [b]) => a.localeCompare(b));
  for (const [machinePath, hostPath] of entries) {
    if (exclude.has(machinePath) || (await lstat(hostPath)).nlink === 0) continue;
    const sha256 = await sha256File(hostPath);
    if (baseline.get(machinePath) === sha256) continue;
    if (dropped.length >= maxFiles) {
      skipped++;
      continue;
    }
    const name = `${sha256.slice(0, 16)}_${safeName(basename(machinePath))}`;
    await copyFile(hostPath, join(filesDir, name));
    dropped.push({ filepath: machinePath, sha256, path: `files/${name}` });
  }
  return { dropped, skipped };
}

/** File names keep their characters, except those that would break the folder or JSON-lines tools. */
function safeName(name: string): string {
  return name.replace(/[\u0000-\u001f/\\]/g, '_').slice(0, 200) || 'file';
}
