import { type Config, configSectionsSchema } from '../../config/schema.js';

/** The configuration's `dropped_files` section: how much of what a sample wrote a task keeps. */
export type DroppedFileLimits = Config['dropped_files'];

/** The documented defaults, for machines prepared outside the service (image commands, benchmarks). */
export function defaultDroppedFileLimits(): DroppedFileLimits {
  return configSectionsSchema.shape.dropped_files.parse(undefined);
}

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

  /**
   * How much of the next file, `size` bytes long, is kept. `available` is what the caller can give at
   * most (a guest may send fewer bytes than its file has); the budget spends only what is kept.
   */
  take(size: number, available = size): DroppedVerdict {
    if (this.listed >= this.limits.max_files) {
      this.unlistedCount++;
      return { listed: false };
    }
    this.listed++;
    const allowedByFile = Math.min(size, this.limits.max_file_size);
    const allowed = Math.min(allowedByFile, this.limits.max_total_size - this.spentBytes);
    const keepBytes = Math.min(allowed, available);
    this.spentBytes += keepBytes;
    if (keepBytes === size) return { listed: true, keepBytes };
    const cut = cutReason(keepBytes, allowedByFile, allowed);
    return cut ? { listed: true, keepBytes, cut } : { listed: true, keepBytes };
  }

  /** Files past `max_files`, known only by their number. */
  get unlisted(): number {
    return this.unlistedCount;
  }
}

/** The per-file limit when it is what cut the file; the task's budget when less than that was left. */
function cutReason(keepBytes: number, allowedByFile: number, allowed: number): CutReason | undefined {
  if (keepBytes === allowedByFile) return 'file_limit';
  if (keepBytes === allowed) return 'task_limit';
  // Neither limit: the source gave fewer bytes than the file has.
  return undefined;
}

/** Biggest last: the task's bytes go first to the many small files a sample drops, not to one filler. */
export function smallestFirst<T extends { size: number; filepath: string }>(files: T[]): T[] {
  return [...files].sort((a, b) => a.size - b.size || a.filepath.localeCompare(b.filepath));
}
