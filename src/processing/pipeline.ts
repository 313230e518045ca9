import { existsSync, realpathSync } from 'node:fs';
import { join } from 'node:path';
import type { AppContext } from '../app.js';
import type { TaskRow } from '../db/schema.js';
import { conflict, notFound } from '../errors.js';
import { writeReports } from '../reporting/index.js';
import { runSignatures, scoreOf } from '../signatures/index.js';
import type { AnalysisPaths } from '../storage/layout.js';
import { PROCESSING_MODULES } from './modules/index.js';
import type { Report } from './report-types.js';
import type { AnyProcessingModule, ProcessingInput } from './types.js';
import { SHIPPED_RULES_DIR, YaraScanner } from './yara.js';

/**
 * Processing of one analysed task: every module turns raw results into its report section, then the
 * signatures run over the report, the score is set and the reports are written. The task moves
 * completed -> reported, or to failed_processing / failed_reporting with the reason in its errors.
 *
 * Stateless: everything lives in this call, so several workers may run it for different tasks. The
 * caller claims the task (the scheduler's claimForProcessing) before calling.
 */
export async function processTask(ctx: AppContext, taskId: number): Promise<void> {
  const task = await ctx.stores.tasks.get(taskId);
  if (!task) throw notFound(`Task ${taskId} not found`, { context: { taskId } });
  if (task.status !== 'completed') {
    throw conflict(`Task ${taskId} is ${task.status}; only completed tasks are processed`, { context: { taskId, status: task.status } });
  }
  const paths = ctx.layout.analysis(taskId);
  let report: Report;
  try {
    report = await buildReport(ctx, task, paths);
    report.signatures = await runSignatures(report, paths);
    report.info.score = scoreOf(report.signatures);
  } catch (error) {
    await fail(ctx, taskId, 'failed_processing', `Processing failed: ${messageOf(error)}`, error);
    return;
  }
  try {
    await writeReports(report, paths);
  } catch (error) {
    await fail(ctx, taskId, 'failed_reporting', `Writing the reports failed: ${messageOf(error)}`, error);
    return;
  }
  await ctx.stores.tasks.transition(taskId, ['completed'], 'reported');
}

/** Runs every module over the task's raw results; a module that fails is named in debug.errors. */
export async function buildReport(
  ctx: AppContext,
  task: TaskRow,
  paths: AnalysisPaths,
  modules: readonly AnyProcessingModule[] = PROCESSING_MODULES,
): Promise<Report> {
  if (!existsSync(paths.dir)) throw notFound(`the analysis folder ${paths.dir} does not exist`, { context: { taskId: task.id } });
  const yara = new YaraScanner([SHIPPED_RULES_DIR, join(ctx.home, 'yara')], ctx.layout.tmp);
  try {
    const input = await inputOf(ctx, task, paths, yara);
    const sections: Record<string, unknown> = {};
    const failures: string[] = [];
    for (const module of modules) {
      try {
        const section = await module.run(input);
        if (section !== undefined) sections[module.key] = section;
      } catch (error) {
        failures.push(`processing module ${module.key} failed: ${messageOf(error)}`);
        ctx.log.warn({ err: error, task: task.id, module: module.key }, 'processing module failed');
      }
    }
    if (!sections.info || !sections.target) throw new Error(failures.join('; '));
    const debug = (sections.debug ??= { log: [], cuckoo: [], action: [], errors: [] }) as NonNullable<Report['debug']>;
    debug.errors.push(...failures, ...yara.problems);
    return { ...sections, signatures: [] } as unknown as Report;
  } finally {
    await yara.close();
  }
}

async function inputOf(ctx: AppContext, task: TaskRow, paths: AnalysisPaths, yara: YaraScanner): Promise<ProcessingInput> {
  const { tasks, samples } = ctx.stores;
  const sample = task.sample_id === null ? undefined : await samples.get(task.sample_id);
  const guest = (await tasks.guestsOf([task.id])).get(task.id);
  const errors = (await tasks.errorsOf([task.id])).get(task.id) ?? [];
  return {
    task,
    sample,
    guest,
    errors,
    paths,
    config: ctx.config,
    binaryPath: binaryOf(ctx, task, paths, sample?.sha256),
    tools: { fileType: ctx.fileType, yara },
  };
}

/** The analysis folder's `binary` (a link into storage/binaries), else the stored binary itself. */
function binaryOf(ctx: AppContext, task: TaskRow, paths: AnalysisPaths, sha256: string | undefined): string | undefined {
  if (task.category !== 'file') return undefined;
  if (existsSync(paths.binary)) return realpathSync(paths.binary);
  if (sha256 !== undefined && existsSync(ctx.layout.binary(sha256))) return ctx.layout.binary(sha256);
  return undefined;
}

async function fail(ctx: AppContext, taskId: number, status: 'failed_processing' | 'failed_reporting', reason: string, error: unknown) {
  ctx.log.error({ err: error, task: taskId }, reason);
  if (await ctx.stores.tasks.transition(taskId, ['completed'], status)) await ctx.stores.tasks.addError(taskId, reason, 'processing');
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
