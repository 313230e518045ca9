import { appendFile, mkdir, rm } from 'node:fs/promises';
import { join } from 'node:path';
import type { Logger } from 'pino';
import type { ArchiveLimits } from '../../storage/archives.js';
import type { DroppedFileLimits } from '../dropped/budget.js';
import type { CreateTaskNetwork, TaskNetwork } from '../host/contracts.js';
import type { SpareNetwork } from '../host/network/index.js';
import { machineId } from '../host/machine-id.js';
import { recordOwner } from '../host/ownership.js';
import type { AnalysisRequest, MachineSession, RunResult } from '../types.js';
import { runWithAgentOnly } from './agent-only-run.js';
import { CuckooResultServer } from './cuckoo-result-server.js';
import { createTap, plugIntoTaskNetwork, removeTap, tapName } from './analysis-link.js';
import { GuestAnalyzer, refuseWhatTheGuestCannotRun } from './guest-analyzer.js';
import { GuestMachine } from './guest-machine.js';
import type { GuestImage, ReadyStateFiles } from './image-store.js';
import { ANALYSIS_MAC, type ColdBoot, type Hardware } from './machine-args.js';
import { dropRebootDisk, keepRebootDisk, keptRebootDisk, type DiskOrigin, type KeptDisk } from './reboot-state.js';
import { ResultChannels, type ChannelSummary } from './result-channels.js';
import { openResultLink, RESULT_LINK, type ResultLink } from './result-link.js';
import { QemuScreenshots } from './screenshots.js';
import type { QemuSettings } from './settings.js';
import { createOverlay, createTaskDisk } from './snapshot.js';
import { withTimeout } from './timeouts.js';
import { WindowsGuestAnalyzer } from './windows-guest.js';

/** What every task of one QEMU machine shares: its settings and its image's ready state. */
export interface QemuMachineContext {
  name: string;
  settings: QemuSettings;
  hardware: Hardware;
  /** The image nestbox built (null for an operator's own image). */
  image: GuestImage | null;
  ready: ReadyStateFiles;
  internetInterface: string;
  /** How the guest unpacks archive samples: the passwords it tries in turn, and how far the host looks into one. */
  archiveLimits: ArchiveLimits;
  droppedFileLimits: DroppedFileLimits;
  createTaskNetwork: CreateTaskNetwork;
  /** The next task's network, made while the machine idles (as the linux kind does). */
  spareNetwork?: SpareNetwork;
}

const LOAD_TIMEOUT_MS = 30_000;
const AGENT_TIMEOUT_MS = 30_000;
const DRAIN_TIMEOUT_MS = 5_000;
const FLUSH_TIMEOUT_MS = 15_000;
/** Cuckoo's result server port, when the machine's `resultserver_port` is 0. */
const DEFAULT_RESULT_PORT = 2042;

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
  /** The analyzer in the guest, once started (operators' agent-only images have none). */
  private analyzer: GuestAnalyzer | WindowsGuestAnalyzer | undefined;
  /** A Windows guest's results: Cuckoo's result server and the link the guest reaches it through. */
  private cuckooResults: CuckooResultServer | undefined;
  private resultLink: ResultLink | undefined;
  /** What the task's disk overlay stands on, noted with the end state kept for reboot tasks. */
  private diskOrigin: DiskOrigin | undefined;
  private collected = false;
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
    // Before the guest starts: a task its Linux guest cannot run (a Windows program: no Wine there) fails
    // with the reason.
    if (request.machine.platform !== 'windows' && context.settings.analyzer !== 'none') {
      await refuseWhatTheGuestCannotRun(request, { limits: context.archiveLimits, workDir: this.runDir });
    }
    const tap = tapName(this.id);
    const rebootDisk = await this.rebootDisk();
    this.diskOrigin = rebootDisk ? { chain: [rebootDisk.disk, ...rebootDisk.chain], boot: rebootDisk.boot } : this.readyOrigin();
    await this.prepareHostSide(tap, rebootDisk);
    const networkMs = performance.now() - started;
    this.machine = await GuestMachine.start({
      hardware: context.hardware,
      runDir: this.runDir,
      processName: tap,
      disk: this.diskPath,
      start: rebootDisk ? { boot: rebootDisk.boot } : { stateFile: context.ready.stateFile },
      tap,
      channels: true,
    });
    this.prefix = await plugIntoTaskNetwork(tap, this.network!);
    if (!rebootDisk) await this.machine.waitUntilLoaded(LOAD_TIMEOUT_MS);
    this.channels = await this.openChannels(this.machine);
    // A restored guest waits, paused, until the host side is wired; a cold boot runs from the start.
    if (!rebootDisk) await this.machine.resume();
    const restoreMs = performance.now() - started - networkMs;
    await this.machine.agent.waitUntilReady(rebootDisk ? context.settings.boot_timeout * 1000 : AGENT_TIMEOUT_MS);
    const totalMs = performance.now() - started;
    this.timings = { networkMs, restoreMs, agentMs: totalMs - networkMs - restoreMs, totalMs };
    const how = rebootDisk ? "machine booted from the original task's end state" : 'machine restored from its ready state';
    this.log.info({ ...roundAll(this.timings), accel: context.hardware.accel }, how);
  }

  private get diskPath(): string {
    return join(this.runDir, 'disk.qcow2');
  }

  /**
   * Reboot tasks: the end state the original task kept, booted cold (a reboot is a real boot). Without
   * one the task says why and starts from the clean ready state, as the linux kind does.
   */
  private async rebootDisk(): Promise<KeptDisk | undefined> {
    const { rebootFrom } = this.request;
    if (!rebootFrom) return undefined;
    const kept = await keptRebootDisk(rebootFrom);
    if ('disk' in kept) return kept;
    this.warn(`${kept.missing}: the reboot starts from a clean machine`);
    return undefined;
  }

  /** A task restored from the ready state stands on the ready disk, and boots with nestbox's kernel (or the disk's firmware). */
  private readyOrigin(): DiskOrigin {
    const { image, ready } = this.context;
    const boot: ColdBoot | null = image ? { kernel: image.kernel, initrd: image.initrd } : null;
    return { chain: [ready.disk], boot };
  }

  /** The task network, the tap and the disk overlay, made side by side; each is kept for release() even if another fails. */
  private async prepareHostSide(tap: string, rebootDisk: KeptDisk | undefined): Promise<void> {
    const { context } = this;
    const [network, ...others] = await Promise.allSettled([
      this.takeNetwork(),
      createTap(tap),
      rebootDisk ? createOverlay(rebootDisk.disk, this.diskPath) : createTaskDisk(context.ready, this.diskPath),
    ]);
    if (network.status === 'fulfilled') this.network = network.value;
    for (const outcome of [network, ...others]) if (outcome.status === 'rejected') throw outcome.reason;
  }

  private openChannels(machine: GuestMachine): Promise<ResultChannels> {
    const { settings } = this.context;
    return ResultChannels.open(machine, this.request.paths, {
      logLimitBytes: settings.log_limit_bytes,
      traceLimitBytes: settings.max_total_upload_mb * 1024 ** 2,
      uploads: this.uploadLimits(),
      droppedFiles: this.context.droppedFileLimits,
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
        const analyzer = this.request.machine.platform === 'windows' ? await this.windowsGuest() : this.guestAnalyzer();
        this.analyzer = analyzer;
        await analyzer.start();
        if (this.context.settings.screenshots) this.startScreenshots();
        ended = await analyzer.waitForEnd(signal);
      }
    } catch (error) {
      this.warn(`analysis failed: ${(error as Error).message}`);
      this.log.error({ err: error }, 'analysis failed');
    }
    await this.channels?.drain(DRAIN_TIMEOUT_MS, this.analyzer?.finished ?? false);
    // The list itself: what collect() still finds (an end state not kept...) reaches the task's errors too.
    return { route, ended, warnings: this.warnings };
  }

  private guestAnalyzer(): GuestAnalyzer {
    const { context, request } = this;
    return new GuestAnalyzer({
      agent: this.machine!.agent,
      request,
      tracing: context.settings.tracing,
      collectGraceSeconds: context.settings.collect_grace,
      archivePasswords: context.archiveLimits.passwords,
      droppedFileLimits: context.droppedFileLimits,
      sleepSkipThresholdSeconds: context.settings.sleep_skip_threshold,
      guestNetwork: this.guestNetwork(),
      warn: (message) => this.warn(message),
    });
  }

  /** Cuckoo's analyzer in a Windows guest, with the result server it reports to and its link. */
  private async windowsGuest(): Promise<WindowsGuestAnalyzer> {
    const { context, request } = this;
    const { settings } = context;
    const socket = join(this.runDir, 'results.sock');
    this.cuckooResults = await CuckooResultServer.listen({ path: socket }, {
      paths: request.paths,
      uploads: this.uploadLimits(),
      droppedFiles: context.droppedFileLimits,
      logLimitBytes: settings.log_limit_bytes,
      behaviourLimitBytes: settings.max_total_upload_mb * 1024 ** 2,
    });
    const port = request.machine.resultserver_port || DEFAULT_RESULT_PORT;
    this.resultLink = await openResultLink(this.network!.netnsName, port, socket);
    const network = this.guestNetwork();
    return new WindowsGuestAnalyzer({
      agent: this.machine!.agent,
      request,
      cuckooCwd: settings.cuckoo_cwd,
      monitor: settings.cuckoo_monitor,
      resultServer: { ip: RESULT_LINK.host, port },
      collectGraceSeconds: settings.collect_grace,
      card: network && { ...network, resultLink: { address: RESULT_LINK.guest, prefix: RESULT_LINK.prefix } },
      warn: (message) => this.warn(message),
    });
  }

  private uploadLimits() {
    const { settings } = this.context;
    return {
      maxFiles: settings.max_uploads,
      maxFileBytes: settings.max_upload_mb * 1024 ** 2,
      maxTotalBytes: settings.max_total_upload_mb * 1024 ** 2,
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

  stop(): Promise<void> {
    this.stopped ??= this.stopMachine();
    return this.stopped;
  }

  private async stopMachine(): Promise<void> {
    await this.screenshots?.stop();
    if (this.machine && this.keepsEndState) await this.flushGuestDisk();
    if (this.machine && this.request.memory) await this.dumpGuestMemory();
    await this.machine?.kill();
  }

  private get keepsEndState(): boolean {
    return this.context.settings.reboot_state_mb > 0;
  }

  /**
   * Makes what the guest wrote reach its overlay before QEMU is killed: the guest's page cache through
   * `sync` (run by the agent), then QEMU's own block caches, which a stopped machine has written out.
   */
  private async flushGuestDisk(): Promise<void> {
    const { agent, qemu } = this.machine!;
    const synced = await withTimeout(agent.execute('sync', { shell: true }).then(() => true, () => false), FLUSH_TIMEOUT_MS);
    if (synced !== true) this.warn('the guest did not flush its disk: the end state kept for reboot tasks may miss its last writes');
    await qemu.qmp.execute('stop').catch((error: unknown) => this.log.warn({ err: error }, 'stopping the machine before keeping its disk failed'));
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
    if (this.collected) return;
    this.collected = true;
    if (this.machine && this.keepsEndState) await this.keepEndState();
    await this.collectCuckooResults();
    if (!this.channels) return;
    this.summary = await this.channels.close();
    for (const warning of this.summary.warnings) this.warn(warning);
    await this.listUploads(this.summary.uploads.entries);
    this.log.info({ events: this.summary.events, uploads: this.summary.uploads.entries.length, shots: this.screenshots?.taken ?? 0 }, 'results collected');
  }

  /** What a Windows guest's analyzer sent; the link closes first, so nothing more comes meanwhile. */
  private async collectCuckooResults(): Promise<void> {
    const results = this.cuckooResults;
    if (!results) return;
    this.cuckooResults = undefined;
    await this.resultLink?.close();
    const summary = await results.close();
    for (const warning of summary.warnings) this.warn(warning);
    await this.listUploads(summary.uploads.entries);
  }

  private async listUploads(entries: readonly object[]): Promise<void> {
    const lines = entries.map((entry) => `${JSON.stringify(entry)}\n`).join('');
    if (lines) await appendFile(this.request.paths.filesJson, lines);
  }

  /** The disk overlay, kept in the analysis folder for reboot tasks (within the size limit). */
  private async keepEndState(): Promise<void> {
    const { paths } = this.request;
    const origin = this.diskOrigin!;
    try {
      const notKept = await keepRebootDisk(this.diskPath, paths, origin, this.context.settings.reboot_state_mb * 2 ** 20);
      if (notKept) this.warn(notKept);
      else this.log.info('end state kept for reboot tasks');
    } catch (error) {
      await dropRebootDisk(paths).catch(() => undefined);
      this.warn(`keeping the end state for reboot tasks failed: ${(error as Error).message}`);
    }
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
    await attempt('closing the result link', () => this.resultLink?.close() ?? Promise.resolve());
    await attempt('closing the result server', () => this.cuckooResults?.close() ?? Promise.resolve());
    await attempt('removing the task network', () => this.network?.close() ?? Promise.resolve());
    await attempt('removing the tap', () => removeTap(tapName(this.id)));
    await attempt('removing the run folder', () => rm(this.runDir, { recursive: true, force: true }));
    // The machine is idle now: the next task's network is made meanwhile.
    this.context.spareNetwork?.refill(this.request.route);
  }

  /** The spare network, handed over (it removes itself if that fails), or one made now. */
  private async takeNetwork(): Promise<TaskNetwork> {
    const { context, request } = this;
    const spare = await context.spareNetwork?.take(request.route);
    if (spare) return spare.handOver(request.paths.pcap);
    return context.createTaskNetwork({
      id: this.id,
      route: request.route,
      internetInterface: context.internetInterface,
      pcapPath: request.paths.pcap,
      log: this.log,
    });
  }

  private warn(message: string): void {
    this.warnings.push(message);
    this.log.warn(message);
  }
}

function roundAll<T extends object>(values: T): Record<keyof T, number> {
  return Object.fromEntries(Object.entries(values).map(([key, value]) => [key, Math.round(value as number)])) as Record<keyof T, number>;
}
