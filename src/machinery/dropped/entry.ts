import type { CutReason, DroppedFileLimits } from './budget.js';

/**
 * The files.json line of one dropped file, as every machine kind writes it. Cuckoo's keys (path,
 * filepath, pids) come first; nestbox adds the file's real size and, when not all of it was kept, what
 * was kept and why, so a reader never mistakes a file's first bytes for the whole file.
 */
export interface DroppedEntry {
  /** files/<name> in the analysis folder; null when none of the file's content was kept. */
  path: string | null;
  /** Path inside the machine. */
  filepath: string;
  pids: number[];
  /** The file's real size in the machine, in bytes. */
  size: number;
  /** Only when fewer bytes were kept than the file has. */
  truncated?: true;
  /** The first bytes of the file that were kept: the stored file's size. */
  kept_size?: number;
  /** SHA-256 of the kept bytes (the stored file), not of the whole file. */
  kept_sha256?: string;
  note?: string;
}

/** What was written to files/ for one dropped file. */
export interface StoredPart {
  /** files/<name>. */
  path: string;
  bytes: number;
  sha256: string;
}

export interface DroppedFacts {
  filepath: string;
  /** Real size in the machine. */
  size: number;
  /** null: nothing was stored. */
  stored: StoredPart | null;
  /** Why the budget kept less than the whole file, if it did. */
  cut?: CutReason | undefined;
}

export function droppedEntry({ filepath, size, stored, cut }: DroppedFacts, limits: DroppedFileLimits): DroppedEntry {
  const entry: DroppedEntry = { path: stored?.path ?? null, filepath, pids: [], size };
  const kept = stored?.bytes ?? 0;
  if (stored && kept >= size) return entry;
  const why = reasonText(cut, limits);
  const note = stored
    ? `truncated: only the first ${kept} of ${size} bytes were kept (${why}); the stored file, its size and its hashes are of those bytes only`
    : `content not kept (${why}): only the path and size are recorded`;
  return { ...entry, truncated: true, kept_size: kept, ...(stored ? { kept_sha256: stored.sha256 } : {}), note };
}

function reasonText(cut: CutReason | undefined, limits: DroppedFileLimits): string {
  switch (cut) {
    case 'file_limit':
      return `over the per-file limit dropped_files.max_file_size of ${limits.max_file_size} bytes`;
    case 'task_limit':
      return `the task's limit dropped_files.max_total_size of ${limits.max_total_size} bytes was spent`;
    default:
      // Not the budget: the file shrank while it was read, or the guest sent less than it announced.
      return 'fewer bytes could be read than the file had';
  }
}
