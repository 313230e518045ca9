import { createWriteStream } from 'node:fs';
import { pino, type Logger } from 'pino';
import type { AppContext } from '../app.js';
import { type GuestStatus, type MachineRow, runsSampleFile, type TaskRow } from '../db/schema.js';
import type { AnalysisRequest, Machinery, RunResult } from '../machinery/types.js';
import type { AnalysisPaths } from '../storage/layout.js';
import { parseOptions } from '../db/task-options.js';
import { prepareTaskFolder } from './task-folder.js';
import * as transfer from '../cluster/transfer/worker-hooks.js';

export interface AnalysisRun {
  task: TaskRow;
  machine: MachineRow;
  guestId: number;
  machinery: Machinery;
  /** Aborted when the service stops: the run ends early and the task goes back to the queue. */
  shutdown: AbortSignal;
}

export type AnalysisOutcome =
  | { state: 'completed'; route: string; warnings: string[] }
  | { state: 'failed'; reason: string }
  | { state: 'interrupted' };

/**
 * Runs one claimed task on its machine: start from a clean state, run, stop, collect, and always
 * destroy. Never throws: every failure becomes an outcome the scheduler records.
 */
export async function runAnalysis(ctx: AppContext, run: AnalysisRun): Promise<AnalysisOutcome> {
  const { machine, machinery } = run;
  const task = ctx.config.cluster.role === 'worker' ? await transfer.beforeRun(ctx, run.task) : run.task;
  const sample = task.sample_id === null ? undefined : await ctx.stores.samples.get(task.sample_id);
  const paths = prepareTaskFolder(ctx.layout, task, sample);
  const log = taskLogger(paths);
  let session;
  try {
    await setGuest(ctx, run.guestId, 'starting');
    session = await machinery.start(analysisRequest(ctx, task, machine, paths, log));
    await setGuest(ctx, run.guestId, 'running');
    // Counted from here: a machine's first start may first build what it needs (the Wine layer, minutes).
    const hardStop = AbortSignal.any([run.shutdown, AbortSignal.timeout(hardLimitMs(ctx, task))]);
    const result: RunResult = await session.run(hardStop);
    await setGuest(ctx, run.guestId, 'stopping');
    await session.stop();
    await session.collect();
    if (run.shutdown.aborted) return { state: 'interrupted' };
    if (result.ended === 'error') return { state: 'failed', reason: result.warnings.join('; ') || 'the analysis failed' };
    // Cuckoo's own words: PeekabooAV looks for them in debug.cuckoo to tell a finished analysis from a failed one.
    log.info(`${machine.name}: analysis completed successfully`);
    return { state: 'completed', route: result.route, warnings: result.warnings };
  } catch (error) {
    if (run.shutdown.aborted) return { state: 'interrupted' };
    log.error({ err: error }, 'analysis failed');
    return { state: 'failed', reason: `${machine.name}: ${(error as Error).message}` };
  } finally {
    await session?.destroy();
    await setGuest(ctx, run.guestId, 'stopped');
    log.flush();
  }
}

function analysisRequest(ctx: AppContext, task: TaskRow, machine: MachineRow, paths: AnalysisPaths, log: Logger): AnalysisRequest {
  const options = parseOptions(task.options);
  return {
    taskId: task.id,
    machine,
    paths,
    // A file unpacked from an archive runs like any file; only its report says where it came from.
    ...(runsSampleFile(task.category) ? { category: 'file', samplePath: task.target } : { category: 'url', url: task.target }),
    package: task.package,
    platform: task.platform,
    options,
    timeoutSeconds: task.timeout > 0 ? task.timeout : ctx.config.tasks.default_timeout,
    enforceTimeout: task.enforce_timeout === 1,
    memory: task.memory === 1,
    route: options.route || ctx.config.routing.default_route,
    clock: task.clock,
    ...(task.reboot_of === null ? {} : { rebootFrom: ctx.layout.analysis(task.reboot_of) }),
    log,
  };
}

/** The analysis timeout plus the critical margin: past it the machine is stopped by force. */
function hardLimitMs(ctx: AppContext, task: TaskRow): number {
  const timeout = task.timeout > 0 ? task.timeout : ctx.config.tasks.default_timeout;
  return (timeout + ctx.config.tasks.critical_timeout) * 1000;
}

/** The task's own log, storage/analyses/<id>/cuckoo.log, as Cuckoo keeps one per analysis. */
function taskLogger(paths: AnalysisPaths): Logger {
  return pino({ level: 'debug', base: undefined }, createWriteStream(paths.taskLog, { flags: 'a' }));
}

function setGuest(ctx: AppContext, guestId: number, status: GuestStatus): Promise<void> {
  return ctx.stores.guests.setStatus(guestId, status);
}
