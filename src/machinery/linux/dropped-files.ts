import { createHash } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { lstat, mkdir, readdir, rename, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { DroppedFileBudget, type DroppedFileLimits, type ListedVerdict, smallestFirst } from '../dropped/budget.js';
import { droppedEntry, type DroppedEntry, type StoredPart } from '../dropped/entry.js';
import { storedName } from '../dropped/stored-name.js';
import { copyHead } from './copy-head.js';
import type { CapturedFile } from './sample-supervisor.js';

/**
 * Dropped files: every regular file the sample created or changed is in the overlay's upper directory.
 * Each is copied into the analysis folder's `files/` as `<first 16 hex of its sha256>_<name>`, with one
 * files.json line per file, as Cuckoo's result server records uploads. The task's `dropped_files`
 * limits decide how much of each is copied (see ../dropped/budget.ts).
 */

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
  /**
   * Files the supervisor copied as they were executed or deleted (see sample-supervisor.ts): listed with
   * the path they ran from or were deleted at, unless the same content is still at that path at the end.
   */
  captured?: CapturedFile[];
  limits: DroppedFileLimits;
}

export interface DroppedCollection {
  /** files.json lines, smallest file first. */
  entries: DroppedEntry[];
  /** Files past `max_files`, only counted. */
  unlisted: number;
}

interface ChangedFile {
  filepath: string;
  hostPath: string;
  size: number;
  /** Bytes the host file holds when fewer than `size` (a capture cut by the limits). */
  available?: number;
}

export async function collectDroppedFiles(options: CollectDroppedOptions): Promise<DroppedCollection> {
  await mkdir(options.filesDir, { recursive: true });
  const budget = new DroppedFileBudget(options.limits);
  const entries: DroppedEntry[] = [];
  const changed = await changedFiles(options);
  for (const file of smallestFirst([...changed, ...(await capturedOnly(options.captured ?? [], changed))])) {
    const verdict = budget.take(file.size, file.available);
    if (verdict.listed) entries.push(await keepFile(file, verdict, options));
  }
  return { entries, unlisted: budget.unlisted };
}

/** The upper directory's regular files that the sample created or changed, with their sizes. */
async function changedFiles({ upper, baseline, exclude }: CollectDroppedOptions): Promise<ChangedFile[]> {
  const changed: ChangedFile[] = [];
  for (const [filepath, hostPath] of await upperFiles(upper)) {
    if (exclude.has(filepath)) continue;
    const stats = await lstat(hostPath);
    if (stats.nlink === 0) continue;
    // Only files that were there before are hashed here; the sample's own are read once, when copied.
    const before = baseline.get(filepath);
    if (before !== undefined && (await sha256File(hostPath)) === before) continue;
    changed.push({ filepath, hostPath, size: stats.size });
  }
  return changed;
}

/** Captured files whose content is not also the end state of their path. */
async function capturedOnly(captured: CapturedFile[], changed: ChangedFile[]): Promise<ChangedFile[]> {
  const atEnd = new Map(changed.map((file) => [file.filepath, file.hostPath]));
  const kept: ChangedFile[] = [];
  for (const file of captured) {
    const end = atEnd.get(file.filepath);
    if (end !== undefined && file.kept === file.size && (await sha256File(end)) === file.sha256) continue;
    kept.push({ filepath: file.filepath, hostPath: file.hostPath, size: file.size, available: file.kept });
  }
  return kept;
}

async function keepFile(file: ChangedFile, verdict: ListedVerdict, { filesDir, limits }: CollectDroppedOptions): Promise<DroppedEntry> {
  // An empty file is kept whole; a file granted no bytes is only listed.
  const storesContent = verdict.keepBytes > 0 || file.size === 0;
  const stored = storesContent ? await storeHead(file, verdict.keepBytes, filesDir) : null;
  return droppedEntry({ filepath: file.filepath, size: file.size, stored, cut: verdict.cut }, limits);
}

/** Copies the kept bytes under a temporary name first: their hash names the stored file. */
async function storeHead(file: ChangedFile, bytes: number, filesDir: string): Promise<StoredPart> {
  const temp = join(filesDir, '.copying');
  try {
    const copied = await copyHead(file.hostPath, temp, bytes);
    const name = storedName(copied.sha256, file.filepath);
    await rename(temp, join(filesDir, name));
    return { path: `files/${name}`, bytes: copied.bytes, sha256: copied.sha256 };
  } finally {
    await rm(temp, { force: true });
  }
}
