import { existsSync, realpathSync } from 'node:fs';
import { join } from 'node:path';
import { EVENTS_FILE } from '../report/events.js';
import { CallsIndexBuilder } from '../report/calls-index.js';
import type { AppContext } from '../app.js';
import { runsSampleFile, type TaskRow } from '../db/schema.js';
import { conflict, notFound } from '../errors.js';
import { writeReports } from '../reporting/index.js';
import { indexReport } from '../search/index-report.js';
import { scoreOf, startSignatures } from '../signatures/index.js';
import type { AnalysisPaths } from '../storage/layout.js';
import { PROCESSING_MODULES } from '../processing/modules/index.js';
import { machineAddresses } from '../processing/modules/network.js';
import { analysePcap, type PcapAnalysis } from '../processing/network-analysis.js';
import type { Report } from '../report/report-types.js';
import type { AnyProcessingModule, ArchiveOrigin, ProcessingInput } from '../processing/types.js';
import { type EventFold, foldEventLog, type FoldOutcome } from '../report/event-log.js';
import { SHIPPED_RULES_DIR, YaraScanner } from '../processing/yara.js';
import { readSupervisorRecord, type SupervisorRecord } from '../report/supervisor-log.js';
import { behaviorStreams } from '../report/behavior-streams.js';
import * as transfer from '../cluster/transfer/worker-hooks.js';

/**
 * Processing of one analysed task: every module turns raw results into its report section, then the
 * signatures run over the report, the score is set, the reports are written and indexed for search. The
 * task moves completed -> reported, or to failed_processing / failed_reporting with the reason in its errors.
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
  const callsIndex = new CallsIndexBuilder(paths.callsIndex);
  let report: Report;
  try {
    const signatures = startSignatures(paths);
    report = await buildReport(ctx, task, paths, PROCESSING_MODULES, [signatures.fold, callsIndex]);
    report.signatures = await signatures.complete(report);
    report.info.score = scoreOf(report.signatures);
  } catch (error) {
    callsIndex.discard();
    await fail(ctx, taskId, 'failed_processing', `Processing failed: ${messageOf(error)}`, error);
    return;
  }
  try {
    await writeReports(report, paths);
    await indexReport(ctx, taskId, report);
  } catch (error) {
    callsIndex.discard();
    await fail(ctx, taskId, 'failed_reporting', `Writing the reports failed: ${messageOf(error)}`, error);
    return;
  }
  await completeCallsIndex(ctx, taskId, callsIndex, report);
  if (!(await handOverResults(ctx, taskId))) return;
  await ctx.stores.tasks.transition(taskId, ['completed'], 'reported', { score: report.info.score });
}

/**
 * Puts the task's calls index in place beside its reports. The reports are complete without it: a
 * failure is logged, and the web interface builds the index again when it is first asked for the calls.
 */
async function completeCallsIndex(ctx: AppContext, taskId: number, callsIndex: CallsIndexBuilder, report: Report): Promise<void> {
  try {
    await callsIndex.complete(report.behavior?.processes ?? []);
  } catch (error) {
    callsIndex.discard();
    ctx.log.warn({ err: error, task: taskId }, 'writing the calls index failed');
  }
}

/**
 * A worker sends the task folder to the main node before the task is reported, so that whoever reads
 * the report finds it there; when that fails for good the task fails reporting.
 */
async function handOverResults(ctx: AppContext, taskId: number): Promise<boolean> {
  if (ctx.config.cluster.role !== 'worker') return true;
  try {
    await transfer.afterProcessing(ctx, taskId);
    return true;
  } catch (error) {
    await fail(ctx, taskId, 'failed_reporting', `Handing the results to the main node failed: ${messageOf(error)}`, error);
    return false;
  }
}

/**
 * Runs every module over the task's raw results; a module that fails is named in debug.errors. The
 * behaviour log is read once: the modules' folds and `logFolds` (the signatures') are fed together.
 */
export async function buildReport(
  ctx: AppContext,
  task: TaskRow,
  paths: AnalysisPaths,
  modules: readonly AnyProcessingModule[] = PROCESSING_MODULES,
  logFolds: ReadonlyArray<EventFold<unknown>> = [],
): Promise<Report> {
  if (!existsSync(paths.dir)) throw notFound(`the analysis folder ${paths.dir} does not exist`, { context: { taskId: task.id } });
  const yara = new YaraScanner([SHIPPED_RULES_DIR, join(ctx.home, 'yara')], ctx.layout.tmp);
  try {
    const input = await inputOf(ctx, task, paths, yara);
    const failures: string[] = [];
    const failed = (module: AnyProcessingModule, error: unknown) => {
      failures.push(`processing module ${module.key} failed: ${messageOf(error)}`);
      ctx.log.warn({ err: error, task: task.id, module: module.key }, 'processing module failed');
    };
    const folded = await foldLogOnce(input, modules, logFolds, failed);
    const sections: Record<string, unknown> = {};
    for (const module of modules) {
      const outcome = folded.get(module);
      if (outcome && !outcome.ok) continue;
      try {
        const section = await module.run(input, outcome?.value);
        if (section !== undefined) sections[module.key] = section;
      } catch (error) {
        failed(module, error);
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

/**
 * The single pass over the behaviour log: each module's fold and the extra folds, fed together. A module
 * whose fold failed is reported through `failed` and gets a failed outcome; without a log, no outcomes.
 */
async function foldLogOnce(
  input: ProcessingInput,
  modules: readonly AnyProcessingModule[],
  extra: ReadonlyArray<EventFold<unknown>>,
  failed: (module: AnyProcessingModule, error: unknown) => void,
): Promise<Map<AnyProcessingModule, FoldOutcome<unknown>>> {
  const folding: Array<[AnyProcessingModule, EventFold<unknown>]> = [];
  const outcomes = new Map<AnyProcessingModule, FoldOutcome<unknown>>();
  for (const module of modules) {
    try {
      const fold = module.foldLog?.(input);
      if (fold) folding.push([module, fold]);
    } catch (error) {
      outcomes.set(module, { ok: false, error });
      failed(module, error);
    }
  }
  const results = await foldEventLog(
    join(input.paths.dir, EVENTS_FILE),
    [...folding.map(([, fold]) => fold), ...extra],
    await behaviorStreams(input.paths, await input.supervisorRecord()),
  );
  if (!results) return outcomes;
  folding.forEach(([module], index) => {
    const outcome = results[index]!;
    outcomes.set(module, outcome);
    if (!outcome.ok) failed(module, outcome.error);
  });
  return outcomes;
}

async function inputOf(ctx: AppContext, task: TaskRow, paths: AnalysisPaths, yara: YaraScanner): Promise<ProcessingInput> {
  const { tasks, samples } = ctx.stores;
  const sample = task.sample_id === null ? undefined : await samples.get(task.sample_id);
  const guest = (await tasks.guestsOf([task.id])).get(task.id);
  const errors = (await tasks.errorsOf([task.id])).get(task.id) ?? [];
  const input: ProcessingInput = {
    task,
    sample,
    guest,
    errors,
    paths,
    config: ctx.config,
    binaryPath: binaryOf(ctx, task, paths, sample?.sha256),
    tools: { fileType: ctx.fileType, yara },
    archive: await archiveOf(ctx, task),
    capture: () => (capture ??= analyseCapture(input)),
    supervisorRecord: () => (supervisorRecord ??= readSupervisorRecord(paths.supervisorLog)),
  };
  let capture: Promise<PcapAnalysis | undefined> | undefined;
  let supervisorRecord: Promise<SupervisorRecord> | undefined;
  return input;
}

/** The submitted archive an archive task's file was unpacked from, with its stored binary when still there. */
async function archiveOf(ctx: AppContext, task: TaskRow): Promise<ArchiveOrigin | undefined> {
  if (task.archive_id === null) return undefined;
  const sample = await ctx.stores.samples.get(task.archive_id);
  const binary = sample && ctx.layout.binary(sample.sha256);
  return {
    name: task.archive_name ?? '',
    member: task.archive_member ?? '',
    sample,
    binaryPath: binary !== undefined && existsSync(binary) ? binary : undefined,
  };
}

/** The capture read once; a failure stays for whoever asks (the network module reports it). */
function analyseCapture(input: ProcessingInput): Promise<PcapAnalysis | undefined> {
  if (!existsSync(input.paths.pcap)) return Promise.resolve(undefined);
  const analysis = analysePcap(input.paths.pcap, { ignoreHosts: machineAddresses(input) });
  analysis.catch(() => undefined);
  return analysis;
}

/** The analysis folder's `binary` (a link into storage/binaries), else the stored binary itself. */
function binaryOf(ctx: AppContext, task: TaskRow, paths: AnalysisPaths, sha256: string | undefined): string | undefined {
  if (!runsSampleFile(task.category)) return undefined;
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
