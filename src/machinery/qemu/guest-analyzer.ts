import { randomBytes } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { basename } from 'node:path';
import { splitArguments } from '../../analysis/packages/arguments.js';
import {
  choosePackage,
  packageCatalogue,
  packageForFile,
  PACKAGES_WITHOUT_WINE,
  passwordsToTry,
  type AnalysisPackage,
  type PackageTarget,
  WHERE_WINDOWS_PROGRAMS_RUN,
} from '../../analysis/packages/index.js';
import { internal, invalidInput } from '../../errors.js';
import type { ArchiveLimits } from '../../storage/archives.js';
import { previewArchivePick } from '../host/archive-preview.js';
import type { DroppedFileLimits } from '../dropped/budget.js';
import type { AnalysisRequest, RunResult } from '../types.js';
import { fileType } from '../host/file-type.js';
import type { AgentClient } from './agent-client.js';
import { analyzerZip } from './analyzer-package.js';
import { followAnalyzerStatus } from './analyzer-status.js';
import { straceOptions } from './guest-trace.js';

/** Where the sample is stored in the guest, as a user would have downloaded it. */
const SAMPLE_DIR = '/tmp';

export interface GuestAnalyzerOptions {
  agent: AgentClient;
  request: AnalysisRequest;
  /** The machine's `tracing` setting: strace options go to the guest only when it traces. */
  tracing: boolean;
  /** Seconds after the timeout the guest has to dump and upload its results before it is stopped by force. */
  collectGraceSeconds: number;
  archivePasswords: readonly string[];
  droppedFileLimits: DroppedFileLimits;
  /** The machine's `sleep_skip_threshold`: the guest's supervisor ends longer sleeps at once. */
  sleepSkipThresholdSeconds: number;
  /** How the guest configures its analysis card; null when the task has no network. */
  guestNetwork: object | null;
  warn(message: string): void;
}

/** What the analyzer runs, and with which package. */
interface Target {
  path: string;
  package: string;
}

/**
 * nestbox's analyzer in the guest, Cuckoo's way: uploaded through the agent for each task with the
 * sample and the configuration, started, then followed through the status it reports.
 */
export class GuestAnalyzer {
  /** The analyzer reported its end (so its last upload is on its way). */
  finished = false;

  constructor(private readonly options: GuestAnalyzerOptions) {}

  async start(): Promise<void> {
    const { agent } = this.options;
    const dir = await agent.mkdtemp({ prefix: 'nestbox-' });
    await agent.extract(dir, await analyzerZip());
    const target = await this.storeTarget();
    await agent.store(`${dir}/analysis.json`, Buffer.from(JSON.stringify(this.analysisConfig(target))));
    await agent.execpy(`${dir}/analyzer.py`, { async: true, cwd: dir });
  }

  /** Follows the analyzer's status until it ends, the deadline passes or the task is aborted. */
  waitForEnd(signal: AbortSignal): Promise<RunResult['ended']> {
    const { agent, request, warn } = this.options;
    const deadline = Date.now() + (request.timeoutSeconds + this.options.collectGraceSeconds) * 1000;
    return followAnalyzerStatus(agent, { deadline, signal, warn, onLook: (finished) => (this.finished = finished) });
  }

  /** Chooses the sample's package, as a linux machine does, and stores the sample in the guest. */
  private async storeTarget(): Promise<Target> {
    const { request, agent } = this.options;
    const chosen = await guestPackage(request);
    const sample = sampleOf(request);
    let path = '';
    if (sample) {
      path = `${SAMPLE_DIR}/${guestFileName(basename(sample))}`;
      await agent.store(path, await readFile(sample));
    }
    return { path: request.category === 'url' ? (request.url ?? '') : path, package: chosen.name };
  }

  private analysisConfig(target: Target): Record<string, unknown> {
    const { request } = this.options;
    return {
      task_id: request.taskId,
      category: request.category,
      target: target.path,
      package: target.package,
      // The packages as data: the guest's analyzer (packages.py) follows the host's catalogue.
      catalogue: packageCatalogue(PACKAGES_WITHOUT_WINE),
      arguments: splitArguments(request.options.arguments),
      options: request.options,
      timeout: request.timeoutSeconds,
      enforce_timeout: request.enforceTimeout,
      memory: request.memory,
      strace: this.options.tracing ? straceOptions() : null,
      clock: clockSeconds(request.clock),
      entropy: randomBytes(64).toString('hex'),
      network: this.options.guestNetwork,
      passwords: passwordsToTry({ options: request.options, passwords: this.options.archivePasswords }),
      // The guest's copy of the limits spares the link what the host would only throw away.
      dropped_files: this.options.droppedFileLimits,
      supervisor: { sleep_threshold_ms: Math.round(this.options.sleepSkipThresholdSeconds * 1000) },
    };
  }
}

/**
 * The package a task runs with in a Linux guest, which has no Wine: a Windows program (or a task asking for
 * the wine package) is refused with the reason (invalid input) rather than run as something else.
 */
export async function guestPackage(request: AnalysisRequest): Promise<AnalysisPackage> {
  return (await guestChoice(request)).chosen;
}

/** The package guestPackage() gives, and the sample as it was typed for the choice (none for URL and reboot tasks). */
async function guestChoice(request: AnalysisRequest): Promise<{ chosen: AnalysisPackage; file?: PackageTarget }> {
  const sample = sampleOf(request);
  const file: PackageTarget | undefined = sample ? { fileName: guestFileName(basename(sample)), fileType: await fileType(sample) } : undefined;
  const reboot = Boolean(request.rebootFrom);
  const chosen = choosePackage({ requested: request.package, category: request.category, target: file, reboot, offered: PACKAGES_WITHOUT_WINE });
  return file ? { chosen, file } : { chosen };
}

/**
 * Refuses, before the guest starts, a task its Linux guest cannot run: a Windows program, or an archive
 * whose file the guest would pick is one. The archive is looked into on the host (archive-preview.ts) and
 * the file chosen as the guest's analyzer chooses it from the packages it offers.
 */
export async function refuseWhatTheGuestCannotRun(request: AnalysisRequest, archives: { limits: ArchiveLimits; workDir: string }): Promise<void> {
  const { chosen, file } = await guestChoice(request);
  const sample = sampleOf(request);
  if (!chosen.unpack || !sample || !file) return;
  const picked = await previewArchivePick({
    path: sample,
    fileType: file.fileType,
    wanted: request.options.file,
    passwords: passwordsToTry({ options: request.options, passwords: archives.limits.passwords }),
    limits: archives.limits,
    workDir: archives.workDir,
    offered: PACKAGES_WITHOUT_WINE,
  });
  if (!picked || !packageForFile({ fileName: picked.name, fileType: picked.fileType })?.runsUnderWine) return;
  throw invalidInput(`the archive's file ${JSON.stringify(picked.name)} is a Windows program, which this machine cannot run: ${WHERE_WINDOWS_PROGRAMS_RUN}`, {
    context: { file: picked.name, fileType: picked.fileType },
  });
}

/** The sample a file task's first run stores in the guest; none for URL and reboot tasks (a reboot runs what the machine kept). */
function sampleOf(request: AnalysisRequest): string | undefined {
  if (request.category !== 'file' || request.rebootFrom) return undefined;
  if (!request.samplePath) throw internal('a file task without a sample', { context: { task: request.taskId } });
  return request.samplePath;
}

/** The sample keeps its name in the guest, minus what would make it another path. */
function guestFileName(name: string): string {
  return name.replace(/[\u0000-\u001f/\\]/g, '_').slice(0, 200) || 'sample';
}

/** The task's clock (ISO text) as epoch seconds; the host's time when it has none or it does not parse. */
function clockSeconds(clock: string): number {
  const parsed = Date.parse(clock);
  return Number.isNaN(parsed) ? Date.now() / 1000 : parsed / 1000;
}
