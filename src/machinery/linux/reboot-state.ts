import { existsSync } from 'node:fs';
import { lstat, mkdir, readdir, rm } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import type { AnalysisPaths } from '../../storage/layout.js';
import { mustRun } from '../host/command.js';

/**
 * The filesystem state a task leaves behind, kept for reboot tasks: a tar of the overlay's upper layer
 * (new and changed files, whiteouts of deleted ones, overlay attributes) in the analysis folder.
 */
export function rebootStatePath(paths: AnalysisPaths): string {
  return join(paths.dir, 'reboot', 'upper.tar');
}

const TAR_OPTIONS = ['--numeric-owner', '--xattrs', '--xattrs-include=trusted.overlay.*'];

/** Saves the upper layer; returns a warning instead when it is larger than `maxBytes`. */
export async function saveRebootState(upper: string, paths: AnalysisPaths, maxBytes: number): Promise<string | undefined> {
  const size = await treeSize(upper);
  if (size > maxBytes) return `end state not kept for reboot tasks: ${size} bytes is over the ${maxBytes}-byte limit`;
  const target = rebootStatePath(paths);
  await mkdir(dirname(target), { recursive: true });
  await rm(target, { force: true });
  await mustRun(['tar', '-c', '-f', target, ...TAR_OPTIONS, '-C', upper, '.'], 'saving the end state');
  return undefined;
}

/** The saved state of an earlier task, or undefined when it kept none. */
export function savedRebootState(paths: AnalysisPaths): string | undefined {
  const path = rebootStatePath(paths);
  return existsSync(path) ? path : undefined;
}


async function treeSize(dir: string): Promise<number> {
  let total = 0;
  for (const entry of await readdir(dir, { withFileTypes: true }).catch(() => [])) {
    const path = join(dir, entry.name);
    total += entry.isDirectory() ? await treeSize(path) : (await lstat(path)).size;
  }
  return total;
}
