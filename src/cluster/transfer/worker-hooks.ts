import { mkdir, rm, symlink } from 'node:fs/promises';
import { basename, join } from 'node:path';
import type { AppContext } from '../../app.js';
import { runsSampleFile, type TaskRow } from '../../db/schema.js';
import { notFound } from '../../errors.js';
import { TransferClient } from './client.js';

/**
 * The two points where a worker's run meets the main node (cluster.role = worker): before the run the
 * sample is made local, after processing the task folder is handed over. Each is one call in the
 * scheduler's run (scheduler/run-analysis.ts) and the pipeline (pipeline/process-task.ts).
 */

/**
 * The task as this worker runs it: a file task's target is the main node's path, so the sample is
 * fetched into this node's storage/binaries and the task runs it from a local path with the same name
 * (tmp/cluster-samples/<id>/<name>). URL tasks need nothing.
 */
export async function beforeRun(ctx: AppContext, task: TaskRow): Promise<TaskRow> {
  if (!runsSampleFile(task.category) || task.sample_id === null) return task;
  const sample = await ctx.stores.samples.get(task.sample_id);
  if (!sample) throw notFound(`The sample of task ${task.id} is not in the database`, { context: { taskId: task.id } });
  const binary = await TransferClient.fromContext(ctx).fetchSample(task.id, sample.sha256);
  const folder = localTargetFolder(ctx, task.id);
  await rm(folder, { recursive: true, force: true });
  await mkdir(folder, { recursive: true });
  const target = join(folder, safeName(basename(task.target)));
  await symlink(binary, target);
  return { ...task, target };
}

/**
 * Sends the processed task folder to the main node; throws when every attempt failed. Once the main
 * node has it, the worker's copy goes (and the local target with it), so workers' disks do not fill
 * up with results nobody reads there. Samples stay in storage/binaries for later tasks.
 */
export async function afterProcessing(ctx: AppContext, taskId: number): Promise<void> {
  const folder = ctx.layout.analysis(taskId).dir;
  const receipt = await TransferClient.fromContext(ctx).uploadResults(taskId, folder);
  ctx.log.info({ task: taskId, ...receipt }, 'results handed over to the main node');
  await rm(folder, { recursive: true, force: true });
  await rm(localTargetFolder(ctx, taskId), { recursive: true, force: true });
}

function localTargetFolder(ctx: AppContext, taskId: number): string {
  return join(ctx.layout.tmp, 'cluster-samples', String(taskId));
}

function safeName(name: string): string {
  return name === '' || name === '.' || name === '..' ? 'sample' : name;
}
