import { existsSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import type { SampleRow, TaskRow } from '../db/schema.js';
import type { AnalysisPaths, StorageLayout } from '../storage/layout.js';
import { parseOptions } from '../db/task-options.js';

/**
 * Prepares storage/analyses/<id>/ for a run: a clean folder with Cuckoo's sub-folders, the `binary`
 * link to storage/binaries/<sha256>, and task.json.
 */
export function prepareTaskFolder(layout: StorageLayout, task: TaskRow, sample: SampleRow | undefined): AnalysisPaths {
  const paths = layout.analysis(task.id);
  rmSync(paths.dir, { recursive: true, force: true });
  paths.create();
  if (sample) {
    const binary = layout.binary(sample.sha256);
    if (existsSync(binary)) symlinkSync(binary, paths.binary);
  }
  writeTaskJson(paths, task);
  return paths;
}

export function writeTaskJson(paths: AnalysisPaths, task: TaskRow): void {
  const snapshot = { ...task, options: parseOptions(task.options), tags: JSON.parse(task.tags) as string[] };
  writeFileSync(paths.taskJson, JSON.stringify(snapshot, null, 2) + '\n');
}
