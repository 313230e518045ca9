import type { Config } from '../../config/schema.js';

/** The configuration's `dropped_files` section: how much of what a sample wrote a task keeps. */
export type DroppedFileLimits = Config['dropped_files'];

/** Why a listed file keeps less than all of its bytes. */
export type CutReason = 'file_limit' | 'task_limit';

/** A listed file: its first `keepBytes` bytes are kept (all of them when `cut` is undefined). */
export interface ListedVerdict {
  listed: true;
  keepBytes: number;
  cut?: CutReason;
}

/** Past `max_files`, a file is only counted. */
export type DroppedVerdict = ListedVerdict | { listed: false };

/**
 * One task's allowance for dropped files, the same for every machine kind. Each file is asked about in
 * turn and the bytes it may keep are spent at once, so the caller only copies what it was granted.
 */
export class DroppedFileBudget {
  private listed = 0;
  private spentBytes = 0;
  private unlistedCount = 0;

  constructor(readonly limits: DroppedFileLimits) {}

  /** How much of the next file, `size` bytes long, is kept. */
  take(size: number): DroppedVerdict {
    if (this.listed >= this.limits.max_files) {
      this.unlistedCount++;
      return { listed: false };
    }
    this.listed++;
    const left = this.limits.max_total_size - this.spentBytes;
    const keepBytes = Math.min(size, this.limits.max_file_size, left);
    this.spentBytes += keepBytes;
    if (keepBytes === size) return { listed: true, keepBytes };
    // The per-file limit is named when it is what cut the file; the task's budget when less than that was left.
    const cut: CutReason = keepBytes === Math.min(size, this.limits.max_file_size) ? 'file_limit' : 'task_limit';
    return { listed: true, keepBytes, cut };
  }

  /** Files past `max_files`, known only by their number. */
  get unlisted(): number {
    return this.unlistedCount;
  }
}

/** Biggest last: the task's bytes go first to the many small files a sample drops, not to one filler. */
export function smallestFirst<T extends { size: number; filepath: string }>(files: T[]): T[] {
  return [...files].sort((a, b) => a.size - b.size || a.filepath.localeCompare(b.filepath));
}
