import { randomBytes } from 'node:crypto';
import { appendFile, mkdir, readFile, rm } from 'node:fs/promises';
import { basename, join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Logger } from 'pino';
import { internal } from '../../errors.js';
import type { CreateTaskNetwork, TaskNetwork } from '../linux/contracts.js';
import { machineId } from '../linux/machine-id.js';
import { recordOwner } from '../linux/ownership.js';
import type { AnalysisRequest, MachineSession, RunResult } from '../types.js';
import { runWithAgentOnly } from './agent-only-run.js';
import { analyzerZip } from './analyzer-package.js';
import { createTap, plugIntoTaskNetwork, removeTap, tapName } from './analysis-link.js';
import { GuestMachine } from './guest-machine.js';
import type { GuestImage, ReadyStateFiles } from './image-store.js';
import { ANALYSIS_MAC, type Hardware } from './machine-args.js';
import { ResultChannels, type ChannelSummary } from './result-channels.js';
import { QemuScreenshots } from './screenshots.js';
import { straceOptions } from './guest-trace.js';
import type { QemuSettings } from './settings.js';
import { createTaskDisk } from './snapshot.js';

/** What every task of one QEMU machine shares: its settings and its image's ready state. */
export interface QemuMachineContext {
  name: string;
  settings: QemuSettings;
  hardware: Hardware;
  /** The image nestbox built (null for an operator's own image). */
  image: GuestImage | null;
  ready: ReadyStateFiles;
  internetInterface: string;
  /** Tried in turn on password-protected zip samples. */
  archivePasswords: string[];
  createTaskNetwork: CreateTaskNetwork;
}

const LOAD_TIMEOUT_MS = 30_000;
const AGENT_TIMEOUT_MS = 30_000;
const DRAIN_TIMEOUT_MS = 5_000;
const STATUS_POLL_MS = 500;
/** Where the sample is stored in the guest, as a user would have downloaded it. */
const SAMPLE_DIR = '/tmp';

/** Timings of a start, for the log and the benchmark. */
export interface StartTimings {
  networkMs: number;
  restoreMs: number;
  agentMs: number;
  totalMs: number;
}

/**
 * One task's machine: a new QEMU restored from the image's ready state onto a throw-away overlay, its
 * analysis card bridged into the task network, driven through the agent. Everything it creates is named
 * after its machine id and released by destroy(), whatever happened before.
 */
export class QemuSession implements MachineSession {
  private network: TaskNetwork | undefined;
  private machine: GuestMachine | undefined;
  private channels: ResultChannels | undefined;
  private summary: ChannelSummary | undefined;
  private screenshots: QemuScreenshots | undefined;
  private readonly warnings: string[] = [];
  /** Prefix length of the machine's address in the task network. */
  private prefix = 24;
  /** The analyzer reported its end (so its last upload is on its way). */
  private analyzerFinished = false;
  private stopped: Promise<void> | undefined;
  private destroyed: Promise<void> | undefined;
  timings: StartTimings | undefined;

  private constructor(
    readonly id: string,
    private readonly context: QemuMachineContext,
    private readonly request: AnalysisRequest,
    private readonly runDir: string,
    private readonly log: Logger,
  ) {}

  static async start(context: QemuMachineContext, request: AnalysisRequest): Promise<QemuSession> {
    const id = machineId(request.taskId);
    const runDir = join(context.settings.run_dir, id);
    const session = new QemuSession(id, context, request, runDir, request.log.child({ machine: context.name, id }));
    try {
      await session.bringUp();
      return session;
    } catch (error) {
      await session.destroy();
      throw error;
    }
  }

  private async bringUp(): Promise<void> {
    const { context, request } = this;
    const started = performance.now();
    for (const dir of [request.paths.logs, request.paths.files, request.paths.memory, request.paths.shots]) await mkdir(dir, { recursive: true });
    await mkdir(this.runDir, { recursive: true });
    await recordOwner(this.runDir, request.taskId);
    const tap = tapName(this.id);
    await this.prepareHostSide(tap);
    const networkMs = performance.now() - started;
    this.machine = await GuestMachine.start({
      hardware: context.hardware,
      runDir: this.runDir,
      processName: tap,
      disk: join(this.runDir, 'disk.qcow2'),
      start: { stateFile: context.ready.stateFile },
      tap,
      channels: true,
    });
    this.prefix = await plugIntoTaskNetwork(tap, this.network!);
    await this.machine.waitUntilLoaded(LOAD_TIMEOUT_MS);
    this.channels = await this.openChannels(this.machine);
    await this.machine.resume();
    const restoreMs = performance.now() - started - networkMs;
    await this.machine.agent.waitUntilReady(AGENT_TIMEOUT_MS);
    const totalMs = performance.now() - started;
    this.timings = { networkMs, restoreMs, agentMs: totalMs - networkMs - restoreMs, totalMs };
    this.log.info({ ...roundAll(this.timings), accel: context.hardware.accel }, 'machine restored from its ready state');
  }

  /** The task network, the tap and the disk overlay, made side by side; each is kept for release() even if another fails. */
  private async prepareHostSide(tap: string): Promise<void> {
    const { context, request } = this;
    const [network, ...others] = await Promise.allSettled([
      context.createTaskNetwork({
        id: this.id,
        route: request.route,
        internetInterface: context.internetInterface,
        pcapPath: request.paths.pcap,
        log: this.log,
      }),
      createTap(tap),
      createTaskDisk(context.ready, join(this.runDir, 'disk.qcow2')),
    ]);
    if (network.status === 'fulfilled') this.network = network.value;
    for (const outcome of [network, ...others]) if (outcome.status === 'rejected') throw outcome.reason;
  }

  private openChannels(machine: GuestMachine): Promise<ResultChannels> {
    const { settings } = this.context;
    return ResultChannels.open(machine, this.request.paths, {
      logLimitBytes: settings.log_limit_bytes,
      traceLimitBytes: settings.max_total_upload_mb * 1024 ** 2,
      uploads: {
        maxFiles: settings.max_uploads,
        maxFileBytes: settings.max_upload_mb * 1024 ** 2,
        maxTotalBytes: settings.max_total_upload_mb * 1024 ** 2,
      },
    });
  }

  async run(signal: AbortSignal): Promise<RunResult> {
    const route = this.network?.route ?? this.request.route;
    let ended: RunResult['ended'] = 'error';
    try {
      if (this.context.settings.analyzer === 'none') {
        if (this.context.settings.screenshots) this.startScreenshots();
        for (const warning of await runWithAgentOnly(this.machine!.agent, this.request, this.guestNetwork(), signal)) this.warn(warning);
        ended = signal.aborted ? 'error' : 'timeout';
      } else {
        await this.startAnalyzer();
        if (this.context.settings.screenshots) this.startScreenshots();
        ended = await this.waitForAnalyzer(signal);
      }
    } catch (error) {
      this.warn(`analysis failed: ${(error as Error).message}`);
      this.log.error({ err: error }, 'analysis failed');
    }
    await this.channels?.drain(DRAIN_TIMEOUT_MS, this.analyzerFinished);
    return { route, ended, warnings: [...this.warnings] };
  }

  /** Cuckoo's way: the analyzer is uploaded for each task, then the sample and the configuration. */
  private async startAnalyzer(): Promise<void> {
    const { agent } = this.machine!;
    const dir = await agent.mkdtemp('nestbox-');
    await agent.extract(dir, await analyzerZip());
    const target = await this.storeTarget();
    await agent.store(`${dir}/analysis.json`, Buffer.from(JSON.stringify(this.analysisConfig(target))));
    await agent.execpy(`${dir}/analyzer.py`, { async: true, cwd: dir });
  }

  private async storeTarget(): Promise<string> {
    const { request } = this;
    if (request.category === 'url') return request.url ?? '';
    if (!request.samplePath) throw internal('a file task without a sample', { context: { task: request.taskId } });
    const path = `${SAMPLE_DIR}/${guestFileName(basename(request.samplePath))}`;
    await this.machine!.agent.store(path, await readFile(request.samplePath));
    return path;
  }

  private analysisConfig(target: string): Record<string, unknown> {
    const { request } = this;
    return {
      task_id: request.taskId,
      category: request.category,
      target,
      package: request.package,
      options: request.options,
      timeout: request.timeoutSeconds,
      enforce_timeout: request.enforceTimeout,
      memory: request.memory,
      strace: this.context.settings.tracing ? straceOptions() : null,
      clock: clockSeconds(request.clock),
      entropy: randomBytes(64).toString('hex'),
      network: this.guestNetwork(),
      passwords: this.context.archivePasswords,
      max_dropped_files: this.context.settings.max_uploads,
      max_dropped_bytes: this.context.settings.max_upload_mb * 1024 ** 2,
    };
  }

  /** How the guest's analysis card is to be configured: the machine's place in the task network. */
  private guestNetwork() {
    const { network } = this;
    if (!network) return null;
    return { mac: ANALYSIS_MAC, address: network.guestAddress, prefix: this.prefix, gateway: network.gatewayAddress, dns: network.gatewayAddress };
  }

  private startScreenshots(): void {
    this.screenshots = new QemuScreenshots(
      this.machine!.qemu.qmp,
      this.runDir,
      this.request.paths.shots,
      this.context.settings.screenshot_interval * 1000,
      this.log,
    );
    this.screenshots.start();
  }

  /**
   * Polls the analysis status the analyzer reports through the agent. A guest that stops answering
   * (hung, crashed, its agent killed) is waited for until the deadline, then stopped by force.
   */
  private async waitForAnalyzer(signal: AbortSignal): Promise<RunResult['ended']> {
    const { agent } = this.machine!;
    const deadline = Date.now() + (this.request.timeoutSeconds + this.context.settings.collect_grace) * 1000;
    while (Date.now() < deadline) {
      if (signal.aborted) {
        this.warn('the analysis was aborted');
        return 'error';
      }
      const state = await agent.status().catch(() => null);
      this.analyzerFinished = state?.status === 'complete' || state?.status === 'failed';
      if (state?.status === 'complete') return state.description === 'timeout' ? 'timeout' : 'exited';
      if (state?.status === 'failed') {
        this.warn(`the analyzer failed: ${state.description ?? 'no reason given'}`);
        return 'error';
      }
      await sleep(STATUS_POLL_MS, undefined, { signal }).catch(() => undefined);
    }
    this.warn('the guest did not finish the analysis in time: it was stopped by force');
    return 'timeout';
  }

  stop(): Promise<void> {
    this.stopped ??= this.stopMachine();
    return this.stopped;
  }

  private async stopMachine(): Promise<void> {
    await this.screenshots?.stop();
    if (this.machine && this.request.memory) await this.dumpGuestMemory();
    await this.machine?.kill();
  }

  /** The whole guest's memory as an ELF core (QMP dump-guest-memory), as memory.dmp. */
  private async dumpGuestMemory(): Promise<void> {
    const started = Date.now();
    try {
      await this.machine!.qemu.qmp.execute('stop');
      await this.machine!.qemu.qmp.execute('dump-guest-memory', { paging: false, protocol: `file:${this.request.paths.memoryDump}` });
      this.log.info({ ms: Date.now() - started }, 'guest memory dumped');
    } catch (error) {
      this.warn(`the full memory dump failed: ${(error as Error).message}`);
    }
  }

  async collect(): Promise<void> {
    await this.stop();
    if (!this.channels || this.summary) return;
    this.summary = await this.channels.close();
    for (const warning of this.summary.warnings) this.warn(warning);
    const lines = this.summary.uploads.entries.map((entry) => `${JSON.stringify(entry)}\n`).join('');
    if (lines) await appendFile(this.request.paths.filesJson, lines);
    this.log.info({ events: this.summary.events, uploads: this.summary.uploads.entries.length, shots: this.screenshots?.taken ?? 0 }, 'results collected');
  }

  destroy(): Promise<void> {
    this.destroyed ??= this.release();
    return this.destroyed;
  }

  private async release(): Promise<void> {
    const attempt = async (what: string, step: () => Promise<unknown>) => {
      try {
        await step();
      } catch (error) {
        this.log.error({ err: error }, `releasing the machine: ${what} failed`);
      }
    };
    await attempt('stopping QEMU', () => this.machine?.kill() ?? Promise.resolve());
    if (this.channels && !this.summary) await attempt('closing the result channels', () => this.channels!.close());
    await attempt('removing the task network', () => this.network?.close() ?? Promise.resolve());
    await attempt('removing the tap', () => removeTap(tapName(this.id)));
    await attempt('removing the run folder', () => rm(this.runDir, { recursive: true, force: true }));
  }

  private warn(message: string): void {
    this.warnings.push(message);
    this.log.warn(message);
  }
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

function roundAll<T extends object>(values: T): Record<keyof T, number> {
  return Object.fromEntries(Object.entries(values).map(([key, value]) => [key, Math.round(value as number)])) as Record<keyof T, number>;
}
