import type { DroppedFileLimits } from './budget.js';
import type { DroppedEntry } from './entry.js';

/** Files named per warning; the rest are in files.json. */
const NAMED = 10;

/**
 * The task warnings that say which dropped files were not kept whole, so that an analyst sees it on
 * the task (its errors, the report's debug section) and not only in files.json.
 */
export function droppedFileWarnings(entries: readonly DroppedEntry[], unlisted: number, limits: DroppedFileLimits): string[] {
  const cut = entries.filter((entry) => entry.truncated);
  const truncated = cut.filter((entry) => entry.path !== null);
  const notKept = cut.filter((entry) => entry.path === null);
  const warnings: string[] = [];
  if (truncated.length > 0) {
    warnings.push(`${count(truncated.length)} truncated (only their first bytes are stored; their report entries say so): ${named(truncated)}`);
  }
  if (notKept.length > 0) {
    warnings.push(`${count(notKept.length)} listed with path and size only, no content kept (${limits.max_total_size} bytes per task): ${named(notKept)}`);
  }
  if (unlisted > 0) warnings.push(`${count(unlisted)} not listed: more than dropped_files.max_files (${limits.max_files})`);
  return warnings;
}

function count(files: number): string {
  return files === 1 ? '1 dropped file' : `${files} dropped files`;
}

function named(entries: readonly DroppedEntry[]): string {
  const shown = entries.slice(0, NAMED).map((entry) => `${entry.filepath} (${entry.size} bytes, ${entry.kept_size ?? 0} kept)`);
  const rest = entries.length - shown.length;
  return rest > 0 ? `${shown.join(', ')} and ${rest} more (files.json)` : shown.join(', ');
}
