import type { ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { chmod, readFile, rm, writeFile } from 'node:fs/promises';
import { basename, join } from 'node:path';
import type { Readable, Stream, Writable } from 'node:stream';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Logger } from 'pino';
import { choosePackage, passwordsToTry, WINDOWS_SAMPLE_DIR, type AnalysisPackage, type PackageContext } from '../../analysis/packages/index.js';
import { WINDOWS_PLATFORM } from '../../config/platforms.js';
import { invalidInput } from '../../errors.js';
import { EVENTS_FILE } from '../../report/events.js';
import type { DroppedEntry } from '../dropped/entry.js';
import { droppedFileWarnings } from '../dropped/warnings.js';
import { fileType } from '../host/file-type.js';
import type { TaskNetwork } from '../host/contracts.js';
import { machineId } from '../host/machine-id.js';
import type { PreparedNetwork } from '../host/network/index.js';
import { recordOwner } from '../host/ownership.js';
import type { AnalysisRequest, MachineSession, RunResult } from '../types.js';
import { AnalysisLog } from './analysis-log.js';
import { MachineCgroups } from './cgroups.js';
import { collectDroppedFiles, snapshotUpper, type FilesJsonLine } from './dropped-files.js';
import type { MachineContext } from './machine-context.js';
import { existsInMachine, hostPathInMachine, writeInMachine } from './machine-path.js';
import { MachineSandboxes, SAMPLE_DIR } from './machine-sandboxes.js';
import { MachineDisk } from './overlay.js';
import { savedRebootState, saveRebootState } from './reboot-state.js';
import { makeMachineDir } from './run-dir.js';
import { dumpSampleMemory } from './sample-memory.js';
import { dumpExitingProcess, recordSupervision, writeSupervisionLog, type Supervision } from './supervision.js';
import { SampleSupervisor } from './sample-supervisor.js';
import { SampleTracing } from './sample-tracing.js';
import { untilBlockedOn } from './sandbox-waiting.js';
import { pickUnpackedFile } from './unpacked.js';
import { previewArchivePick } from '../host/archive-preview.js';
import { VirtualDisplay } from './virtual-display.js';
import { ensureWineLayer } from './wine-layer.js';
import { WINE_OWN_FILES, WineRun } from './wine-run.js';
import { WINDOWS_COMPUTER_NAME } from '../../report/windows-paths.js';
import { exportedNames } from '../../formats/pe.js';

export type { MachineContext } from './machine-context.js';

const UNPACK_TIMEOUT_MS = 120_000;
/** The sample's sandbox waits on this fd until the tracer records. */
const BLOCK_FD = 4;
const INFO_FD = 5;
/** Wine's boot before a Windows sample (the init's prelude) may take this long before the sandbox waits to start. */
const WINE_PRELUDE_TIMEOUT_MS = 60_000;

/** Everything one task's machine holds; released by destroy() in reverse order. */
export class LinuxSession implements MachineSession {
  private network: TaskNetwork | undefined;
  private sample: ChildProcess | undefined;
  private baseline = new Map<string, string>();
  private memoryFiles: FilesJsonLine[] = [];
  /** The sample's supervisor and the end of its socket pair the sample's sandbox inherits, until it is spawned. */
  private supervisor: { process: SampleSupervisor; channel: Stream | undefined } | undefined;
  /** What the supervisor did: shortened sleeps, captured files, dumps of exiting processes. */
  private readonly supervision: Supervision = { sleeps: [], unrecorded: [], captured: [], exitDumps: [], exitDumpBytes: 0, exitDumpsStopped: false };
  private readonly warnings: string[] = [];
  private stopped: Promise<void> | undefined;
  /** Set once the sample's run is over: a display that comes up later takes no screenshots. */
  private runOver = false;
  private destroyed: Promise<void> | undefined;
  private readonly log: Logger;
  readonly analysisLog: AnalysisLog;
  readonly disk: MachineDisk;
  readonly cgroups: MachineCgroups;
  private readonly sandboxes: MachineSandboxes;
  private readonly display: VirtualDisplay;
  private readonly tracing: SampleTracing;
  /** Inside the machine. */
  private samplePath = '';
  private package: AnalysisPackage | undefined;
  /** libmagic's type of the sample, looked up while the machine is being made. */
  private sampleType: Promise<string> = Promise.resolve('');
  /** The package that starts the sample: the chosen one, or for archives the one of the file inside. */
  private runner: AnalysisPackage | undefined;
  /** A Windows sample's Wine: its layer under the machine's disk and its part of the run. */
  private wine: { layer: string; run: WineRun } | undefined;
  /** The sample, or the file its archive package will run, is a Windows program: the machine is made with Wine. */
  private underWine = false;

  private constructor(
    private readonly context: MachineContext,
    private readonly request: AnalysisRequest,
    readonly id: string,
    readonly dir: string,
    /** The spare network this machine was given, until it is handed over. */
    private prepared: PreparedNetwork | null,
  ) {
    this.log = request.log.child({ machine: id });
    this.disk = new MachineDisk(dir);
    this.cgroups = new MachineCgroups(context.cgroupLayout, id);
    this.analysisLog = new AnalysisLog(request.paths.analysisLog, context.settings.log_limit_bytes);
    this.sandboxes = new MachineSandboxes(context, this.disk, this.cgroups);
    const report = { warn: (message: string) => this.warn(message), debug: (message: string) => this.analysisLog.debug(message) };
    this.display = new VirtualDisplay(this.sandboxes, {
      enabled: context.settings.screenshots,
      shotsDir: request.paths.shots,
      intervalMs: context.settings.screenshot_interval * 1000,
      log: this.log,
      needed: () => !this.runOver || Boolean(this.runner?.needsDisplay),
      ...report,
    });
    this.tracing = new SampleTracing({
      tracer: context.tracer,
      cgroupV2Path: this.cgroups.v2Path('sample'),
      eventsPath: join(request.paths.dir, EVENTS_FILE),
      log: this.log,
      analysisLog: this.analysisLog,
      warn: report.warn,
    });
  }

  /** Starts a clean machine for the request; on failure everything created so far is removed. */
  static async start(context: MachineContext, request: AnalysisRequest): Promise<LinuxSession> {
    // A network made ahead names the machine, so everything of one machine carries one id.
    const prepared = (await context.spareNetwork?.take(request.route)) ?? null;
    const id = prepared?.id ?? machineId(request.taskId);
    const dir = join(context.settings.run_dir, id);
    try {
      await makeMachineDir(dir);
      await recordOwner(dir, request.taskId);
      request.paths.create();
    } catch (error) {
      await prepared?.discard();
      throw error;
    }
    const session = new LinuxSession(context, request, id, dir, prepared);
    try {
      await session.setUp();
      return session;
    } catch (error) {
      await session.destroy();
      throw error;
    }
  }

  private async setUp(): Promise<void> {
    const { settings } = this.context;
    const { request } = this;
    this.analysisLog.info(`starting machine ${this.id} for task ${request.taskId}`);
    const mark = phaseTimer(this.log);
    const restoreFrom = request.rebootFrom ? savedRebootState(request.rebootFrom) : undefined;
    if (request.rebootFrom && !restoreFrom) this.warn('the original task kept no end state: the reboot starts from a clean machine');
    // Independent steps run side by side; all are awaited to the end even when one fails, so that
    // destroy() knows of everything made.
    this.sampleType = request.samplePath ? fileType(request.samplePath) : Promise.resolve('');
    // The package decides the disk's layers (Wine's for a Windows program): it is chosen first. A Windows
    // sample's supervisor needs the disk's lower layers mounted, so it starts after them.
    const choosing = this.choosePackage();
    const mounting = choosing.then(async () => {
      if (!this.underWine) return this.disk.mount([this.context.guestRoot], settings.disk_mb * 2 ** 20, this.sandboxes.rootId, restoreFrom);
      const layer = await ensureWineLayer(this.context.guestRoot, settings, this.log);
      this.wine = { layer, run: new WineRun(join(request.paths.logs, 'wine')) };
      await this.disk.mount([layer, this.context.guestRoot], settings.disk_mb * 2 ** 20, this.sandboxes.rootId, restoreFrom);
      this.startSupervisor({ watchFiles: true });
    });
    void choosing.then(() => {
      if (!this.underWine) this.startSupervisor({ watchFiles: true });
    }, () => undefined);
    const [network, ...others] = await Promise.allSettled([
      this.takeNetwork(),
      mounting,
      this.cgroups.create({ memoryBytes: settings.memory_mb * 2 ** 20, pidsMax: settings.pids_max, cpuPercent: settings.cpu_percent }),
    ]);
    if (network.status === 'fulfilled') this.network = network.value;
    for (const step of [network, ...others]) if (step.status === 'rejected') throw step.reason;
    await this.sandboxes.prepare(this.network!, this.wine ? WINDOWS_COMPUTER_NAME : undefined);
    mark('network, disk, cgroups');
    await this.placeSample();
    mark('sample placed');
    // Xvfb takes about 0.15 s of CPU to be ready. A sample that needs it (or may: an archive's file is not
    // known yet) waits for it, so it starts now; for others it starts once the sample runs, off the way to
    // the sample's first instruction.
    if (this.package?.needsDisplay || this.package?.unpack) void this.display.launch();
  }

  /** The spare network, handed over (it removes itself if that fails), or one made now. */
  private takeNetwork(): Promise<TaskNetwork> {
    const { request } = this;
    const prepared = this.prepared;
    this.prepared = null;
    if (prepared) return prepared.handOver(request.paths.pcap);
    return this.context.createTaskNetwork({
      id: this.id,
      route: request.route,
      internetInterface: this.context.internetInterface,
      pcapPath: request.paths.pcap,
      log: this.log,
    });
  }

  /** Picks the package that runs the sample, from its name and libmagic's type. */
  private async choosePackage(): Promise<void> {
    const { request } = this;
    if (request.category === 'file' && !request.samplePath && !request.rebootFrom) throw invalidInput('a file task needs its sample', { context: { taskId: request.taskId } });
    const target = request.category === 'file' && request.samplePath ? { fileName: this.sampleName(), fileType: await this.sampleType } : undefined;
    this.package = choosePackage({ requested: request.package, category: request.category, target, reboot: Boolean(request.rebootFrom) });
    this.underWine = Boolean(this.package.runsUnderWine) || Boolean((await this.archivePick())?.package.runsUnderWine);
  }

  /** An archive's file the machine will run, looked at on the host (archive-preview.ts); undefined for other samples. */
  private async archivePick() {
    const { request } = this;
    if (!this.package?.unpack || !request.samplePath) return undefined;
    return previewArchivePick({
      path: request.samplePath,
      fileType: await this.sampleType,
      wanted: request.options.file,
      passwords: passwordsToTry({ options: request.options, passwords: this.context.archivePasswords }),
      limits: this.context.archiveLimits,
      workDir: this.dir,
    });
  }

  private sampleName(): string {
    return basename(this.request.samplePath ?? '').replace(/[\u0000-\u001f]/g, '_') || 'sample';
  }

  /** Copies the sample into the machine: a Windows program into the user's Downloads folder. */
  private async placeSample(): Promise<void> {
    const { request } = this;
    if (request.category === 'file' && request.samplePath) {
      this.samplePath = `${this.underWine ? WINDOWS_SAMPLE_DIR : SAMPLE_DIR}/${this.sampleName()}`;
      await writeInMachine(this.disk.root, this.samplePath, await readFile(request.samplePath), 0o755, this.sandboxes.rootId);
      this.analysisLog.info(`sample ${this.samplePath}: ${await this.sampleType}`);
    }
    this.analysisLog.info(`analysis package: ${this.package!.name}`);
  }

  async run(signal: AbortSignal): Promise<RunResult> {
    const { request } = this;
    const context: PackageContext = {
      path: this.samplePath,
      url: request.url ?? '',
      options: request.options,
      passwords: this.context.archivePasswords,
      fileType: await this.sampleType,
      ...(this.wine && request.samplePath ? { firstExport: await firstExportOf(request.samplePath) } : {}),
    };
    let ended: RunResult['ended'] = 'error';
    try {
      const command = await this.commandToRun(context);
      this.baseline = await snapshotUpper(this.disk.upper);
      ended = await this.runSample(command, signal);
    } catch (error) {
      this.warn(`analysis failed: ${(error as Error).message}`);
      this.log.error({ err: error }, 'analysis failed');
    }
    await this.finishRun();
    this.analysisLog.info(`analysis ended: ${ended}`);
    // The list itself, not a copy: what collect() finds later (dropped files cut, an end state not kept)
    // reaches the task's errors too, as on the qemu kind.
    return { route: this.network?.route ?? request.route, ended, warnings: this.warnings };
  }

  /**
   * The sample's command line; archives are unpacked first (untraced) and the file inside is run: a
   * Windows program from a folder beside its archive in the user's Downloads, with its own type and exports.
   */
  private async commandToRun(context: PackageContext): Promise<string[]> {
    const pkg = this.package!;
    this.runner = pkg;
    if (!pkg.unpack) return this.commandOf(this.checkPlatform(pkg, this.samplePath, context.fileType), context);
    const step = pkg.unpack(context, this.wine ? `${WINDOWS_SAMPLE_DIR}/${archiveStem(this.sampleName())}` : undefined);
    const code = await this.runSupport(step.argv, UNPACK_TIMEOUT_MS);
    if (code !== 0) throw new Error(`cannot unpack the archive (exit ${code})`);
    const picked = await pickUnpackedFile(this.disk.root, step.into, context.options.file);
    const hostPath = await hostPathInMachine(this.disk.root, picked.path);
    await chmod(hostPath, 0o755);
    this.analysisLog.info(`unpacked; running ${picked.path} (${picked.fileType}) with package ${picked.package.name}`);
    this.runner = this.checkPlatform(picked.package, picked.path, picked.fileType);
    if (Boolean(picked.package.runsUnderWine) !== Boolean(this.wine)) throw new Error(wineMismatch(picked.path, this.wine !== undefined));
    const firstExport = this.wine ? await firstExportOf(hostPath) : undefined;
    return this.commandOf(picked.package, { ...context, path: picked.path, fileType: picked.fileType, ...(firstExport ? { firstExport } : {}) });
  }

  /** A task asking for platform windows runs on a linux machine under Wine, or not at all. */
  private checkPlatform(pkg: AnalysisPackage, path: string, type: string | undefined): AnalysisPackage {
    // A reboot resumes a run that was checked when it started.
    if (this.request.platform !== WINDOWS_PLATFORM || pkg.runsUnderWine || this.request.rebootFrom) return pkg;
    throw new Error(`the task asks for platform "windows", which a linux machine runs under Wine, for Windows programs only; ${path || 'its target'} is none (${type || this.request.category})`);
  }

  /** The package's command, or its fallback when the command's program is not in this machine (no browser). */
  private async commandOf(pkg: AnalysisPackage, context: PackageContext): Promise<string[]> {
    const command = pkg.command(context);
    const fallback = pkg.fallbackCommand(context);
    if (!fallback || (await existsInMachine(this.disk.root, command[0]!))) return command;
    this.analysisLog.info(`${command[0]} is not in this machine: ${fallback[0]} instead`);
    return fallback;
  }

  /** Runs a helper command in the machine, outside the traced cgroup; resolves with its exit code. */
  private async runSupport(argv: string[], timeoutMs: number): Promise<number> {
    const child = this.sandboxes.spawn('support', argv);
    child.stdout?.on('data', (chunk: Buffer) => this.analysisLog.output(chunk));
    child.stderr?.on('data', (chunk: Buffer) => this.analysisLog.output(chunk));
    const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
    const [code] = (await once(child, 'exit')) as [number | null];
    clearTimeout(timer);
    return code ?? 128;
  }

  private async runSample(command: string[], signal: AbortSignal): Promise<RunResult['ended']> {
    const { request } = this;
    // Wine's boot is nestbox's work, not the sample's: it may use every core, and the machine's CPU cap
    // holds again before the sample is released (a cap that cannot be set again fails the task).
    if (this.wine) await this.cgroups.limitCpu(null);
    let child = await this.spawnBlocked(command);
    const mark = phaseTimer(this.log);
    // The tracer records the sample's cgroup from when the sandbox waits at its block fd: nestbox's launch
    // there is over, and only the init starting the sample follows. A program kept ready arms in
    // milliseconds, so a tracer armed earlier would see that launch (and the first task, whose tracer was
    // still compiling, would not).
    const pid1 = await this.untilSandboxWaits(child);
    if (this.wine) {
      await this.cgroups.limitCpu(this.context.settings.cpu_percent);
      // What Wine's boot wrote (wineserver's folder, the prefix's notes) is the machine's, not the sample's.
      this.baseline = await snapshotUpper(this.disk.upper);
      this.wine.run.released(pid1, await this.cgroups.pids('sample'));
    }
    this.tracing.arm(this.wine ? WINDOWS_SAMPLE_DIR : SAMPLE_DIR);
    // Other samples start at once; the display comes up beside them and screenshots begin when it is there.
    const [argv] = await Promise.all([this.tracing.command(command), this.runner?.needsDisplay ? this.display.launch() : undefined]);
    mark('tracer and display ready');
    if (argv !== command) {
      // A tracer that launches the sample itself (strace): the waiting sandbox is replaced by one running it.
      this.analysisLog.info('the tracer starts the sample itself (a sample can notice it is traced)');
      // The launcher dies first, so nothing new can appear; then whatever it had made (its pid 1 may not
      // yet know to die with it) goes with the cgroup.
      await this.supervisor?.process.stop();
      child.kill('SIGKILL');
      await waitForExit(child);
      await this.cgroups.kill('sample');
      child = await this.spawnBlocked(argv, { underStrace: true });
      await this.untilSandboxWaits(child);
    }
    const exited = once(child, 'exit').then(() => undefined, () => undefined);
    this.analysisLog.info(`running: ${JSON.stringify([...argv])}`);
    (child.stdio[BLOCK_FD] as Writable | null)?.end('go');
    void this.display.launch().then(() => {
      if (!this.runOver) this.display.startScreenshots();
    });
    const timer = new AbortController();
    const deadline = sleep(request.timeoutSeconds * 1000, 'timeout' as const, { signal: AbortSignal.any([signal, timer.signal]) }).catch(() =>
      signal.aborted ? ('aborted' as const) : ('exited' as const),
    );
    const done = request.enforceTimeout ? deadline : exited.then(() => this.allExited());
    const outcome = await Promise.race([deadline, done]);
    timer.abort();
    if (outcome === 'aborted') {
      this.warn('the analysis was aborted');
      return 'error';
    }
    if (outcome === 'timeout') {
      this.analysisLog.info(`timeout of ${request.timeoutSeconds} s reached`);
      return 'timeout';
    }
    this.analysisLog.info('every process of the sample has exited');
    return 'exited';
  }

  /** Resolves once the sample's sandbox is set up (for Wine: Wine's own processes started) and waits to be released (or has failed). */
  private async untilSandboxWaits(child: ChildProcess): Promise<number | null> {
    const pid1 = await this.moveLauncherAside(child);
    let timeoutMs: number | undefined;
    if (this.wine) {
      // Wine's boot takes about a second: its end is awaited first, so that the init is not looked at
      // a thousand times meanwhile (on two cores that would slow the boot down).
      const started = performance.now();
      await this.wine.run.untilBooted(WINE_PRELUDE_TIMEOUT_MS);
      timeoutMs = Math.max(WINE_PRELUDE_TIMEOUT_MS - (performance.now() - started), 1);
    }
    if (pid1 !== null && !(await untilBlockedOn(pid1, BLOCK_FD, timeoutMs))) this.log.warn({ pid1 }, 'the sandbox was not seen waiting to start');
    return pid1;
  }

  /**
   * The bwrap launcher (outside the machine's namespaces, waiting for the sandbox) joins the support leaf
   * once the sandbox's pid 1 exists, so the sample's cgroup, and the behaviour traced in it, hold only
   * the machine's init and the sample's processes. Resolves with the host pid of that pid 1.
   */
  private async moveLauncherAside(child: ChildProcess): Promise<number | null> {
    const info = (child.stdio as Array<Readable | Writable | null | undefined>)[INFO_FD] as Readable | null | undefined;
    if (!info || child.pid === undefined) return null;
    const pid1 = await new Promise<number | null>((resolve) => {
      let text = '';
      info.on('data', (chunk: Buffer) => {
        text += chunk.toString();
        const found = /"child-pid"\s*:\s*(\d+)/.exec(text);
        if (found) resolve(Number(found[1]));
      });
      info.once('end', () => resolve(null));
      child.once('exit', () => resolve(null));
    });
    if (pid1 === null) return null;
    for (const file of this.cgroups.procsFiles('support')) await writeFile(file, String(child.pid)).catch(() => undefined);
    return pid1;
  }

  /** The sample's sandbox, set up and waiting on its block fd before it starts argv, with its supervisor. */
  private async spawnBlocked(argv: string[], { underStrace = false } = {}): Promise<ChildProcess> {
    // The supervisor started with the machine serves the first sandbox; a replacement gets one of its own.
    if (!this.supervisor?.channel) {
      await this.supervisor?.process.stop();
      this.startSupervisor({ watchFiles: !underStrace });
      if (underStrace) this.analysisLog.info('under strace, executed and deleted files are not captured as they run: only the end state is collected');
    }
    const supervisor = this.supervisor!;
    const channel = supervisor.channel!;
    supervisor.channel = undefined;
    // What the machine holds now (the sample, an unpacked archive) is nestbox's: the supervisor notes it first.
    supervisor.process.begin();
    const child = this.wine && !underStrace ? await this.spawnUnderWine(argv, channel) : this.sandboxes.spawn('sample', argv, { extraPipes: 2, blockFd: BLOCK_FD, infoFd: INFO_FD, supervisorChannel: channel });
    SampleSupervisor.release(channel);
    child.stdout?.on('data', (chunk: Buffer) => this.analysisLog.output(chunk));
    if (!this.wine) child.stderr?.on('data', (chunk: Buffer) => this.analysisLog.output(chunk));
    this.sample = child;
    return child;
  }

  /**
   * A Windows sample's sandbox: the init first starts Wine's own processes (its prelude), then waits on
   * the block fd itself; the sandbox's standard error is Wine's debug output of the sample.
   */
  private async spawnUnderWine(argv: string[], channel: Stream): Promise<ChildProcess> {
    const { run } = this.wine!;
    // Wine's desktop (explorer.exe, started by the prelude) opens on the display: the prelude waits for
    // it, so the display's start (0.1-0.3 s) overlaps the sandbox's and wineserver's.
    void this.display.launch();
    const base = this.sandboxes.specEnvironment();
    const child = this.sandboxes.spawn('sample', run.initArgv(argv), { ...run.sandboxOverrides(base), cwd: WINDOWS_SAMPLE_DIR, infoFd: INFO_FD, supervisorChannel: channel });
    await run.attach(child);
    return child;
  }

  /** Spawning costs milliseconds: it is done while the machine's disk and network are made. */
  private startSupervisor({ watchFiles }: { watchFiles: boolean }): void {
    const { context, request, supervision } = this;
    const { supervisor, channel } = SampleSupervisor.start({
      program: context.supervisorPath,
      rootId: this.sandboxes.rootId,
      merged: this.disk.root,
      upper: this.disk.upper,
      // The layers the machine started from: a Windows sample's machine has Wine's over the guest root.
      lower: this.wine ? this.disk.lowerView : context.guestRoot,
      ownFilesDir: this.sandboxes.boundFilesDir,
      captureDir: join(this.dir, 'captured'),
      sleepThresholdSeconds: context.settings.sleep_skip_threshold,
      limits: context.droppedFileLimits,
      watchFiles,
      ...(request.memory ? { onExit: (pid: number) => dumpExitingProcess(pid, request.paths.memory, supervision, this.analysisLog) } : {}),
      onSleep: (sleep) => recordSupervision.sleep(sleep, supervision, this.analysisLog),
      onUnrecorded: (calls) => recordSupervision.unrecorded(calls, supervision, this.analysisLog),
      onCapture: (file) => recordSupervision.capture(file, supervision, this.analysisLog),
      onProblem: (message) => this.warn(message),
    });
    this.supervisor = { process: supervisor, channel };
  }

  /** The bwrap launcher exits once init (and so every process of the sample) has. */
  private async allExited(): Promise<'exited'> {
    while (await this.cgroups.populated('sample')) await sleep(20);
    return 'exited';
  }

  /** Last screenshot, memory dumps of the frozen sample, then nothing of the sample runs any more. */
  private async finishRun(): Promise<void> {
    this.runOver = true;
    await this.display.stopScreenshots();
    if (this.request.memory) this.memoryFiles = await dumpSampleMemory(this.cgroups, this.sample?.pid, this.request.paths.memory, this.analysisLog);
    // Wine still running (a timeout): wineserver saves the registry as it ends.
    if (this.wine) await this.wine.run.stopServer(await this.cgroups.pids('sample'));
    await this.cgroups.kill();
  }

  async stop(): Promise<void> {
    this.stopped ??= this.stopEverything();
    await this.stopped;
  }

  private async stopEverything(): Promise<void> {
    this.runOver = true;
    await this.display.stopScreenshots().catch(() => undefined);
    const launchers = [this.sample, this.display.process];
    // Launchers first (one may not have joined its cgroup yet), then everything in the machine's cgroups.
    for (const child of launchers) if (child && child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    await this.cgroups.kill().catch((error: unknown) => this.log.warn({ err: error }, 'cannot kill the machine'));
    await this.supervisor?.process.stop();
    if (this.supervisor?.channel) SampleSupervisor.release(this.supervisor.channel);
    await this.tracing.stop(this.disk.upper);
    await Promise.all(launchers.map((child) => waitForExit(child)));
  }

  async collect(): Promise<void> {
    await this.stop();
    const { paths } = this.request;
    const lines: Array<FilesJsonLine | DroppedEntry> = [];
    try {
      const limits = this.context.droppedFileLimits;
      const { entries, unlisted } = await collectDroppedFiles({
        upper: this.disk.upper,
        filesDir: paths.files,
        baseline: this.baseline,
        exclude: new Set([...(this.tracing.logInMachine ? [this.tracing.logInMachine] : []), ...(this.wine ? WINE_OWN_FILES : [])]),
        captured: this.supervision.captured,
        limits,
      });
      lines.push(...entries);
      this.analysisLog.info(`dropped files: ${entries.length}`);
      for (const warning of droppedFileWarnings(entries, unlisted, limits)) this.warn(warning);
      const notKept = await saveRebootState(this.disk.upper, paths, this.context.settings.reboot_state_mb * 2 ** 20);
      if (notKept) this.warn(notKept);
    } catch (error) {
      this.warn(`collecting the machine's files failed: ${(error as Error).message}`);
    }
    if (this.wine) await this.wine.run.collect(this.disk.root, this.wine.layer).catch((error: Error) => this.warn(`collecting Wine's results failed: ${error.message}`));
    const shots = this.display.screenshotsTaken;
    for (let index = 1; index <= shots; index++) lines.push({ path: `shots/${String(index).padStart(4, '0')}.jpg`, filepath: null, pids: [] });
    lines.push(...this.supervision.exitDumps, ...this.memoryFiles);
    await writeSupervisionLog(paths.supervisorLog, this.supervision);
    if (shots > 0) this.analysisLog.info(`screenshots: ${shots}`);
    await writeFile(paths.filesJson, lines.map((line) => `${JSON.stringify(line)}\n`).join(''));
    await this.analysisLog.close();
  }

  async destroy(): Promise<void> {
    this.destroyed ??= this.release();
    await this.destroyed;
  }

  private async release(): Promise<void> {
    const step = async (what: string, action: () => Promise<unknown>) => {
      try {
        await action();
      } catch (error) {
        this.log.error({ err: error, machine: this.id }, `cleanup: ${what} failed`);
      }
    };
    await step('stop', () => this.stop());
    await step('network', async () => (this.network ? this.network.close() : this.prepared?.discard()));
    await step('unmount', () => this.disk.unmount());
    await step('cgroups', () => this.cgroups.remove());
    await step('run folder', () => rm(this.dir, { recursive: true, force: true }));
    await this.analysisLog.close();
    // The machine is idle now: the next task's network is made meanwhile.
    this.context.spareNetwork?.refill(this.request.route);
  }

  private warn(message: string): void {
    this.warnings.push(message);
    this.analysisLog.warning(message);
    this.log.warn({ machine: this.id }, message);
  }
}

/** Logs (at debug level) the milliseconds each phase took since the previous one. */
function phaseTimer(log: Logger): (phase: string) => void {
  let last = performance.now();
  return (phase) => {
    const now = performance.now();
    log.debug({ ms: Math.round((now - last) * 10) / 10 }, `machine phase: ${phase}`);
    last = now;
  };
}

/** The folder a Windows user would unpack an archive into: its name without the extension (`.tar.gz` too). */
function archiveStem(name: string): string {
  return name.replace(/(\.tar)?\.[^.]+$/i, '') || 'unpacked';
}

/** The machine picked another file than the look into the archive on the host foresaw. */
function wineMismatch(path: string, wineMounted: boolean): string {
  return wineMounted
    ? `the archive's file ${path}, picked in the machine, is not the Windows program found when it was looked into on the host`
    : `the archive's file ${path}, picked in the machine, is a Windows program, but none was found when it was looked into on the host, so the machine has no Wine`;
}

/** A DLL's first exported name (rundll32's function when the task names none). */
async function firstExportOf(path: string): Promise<string | undefined> {
  return (await exportedNames(path))[0];
}

async function waitForExit(child: ChildProcess | undefined): Promise<void> {
  if (!child || child.exitCode !== null || child.signalCode !== null) return;
  const timer = new AbortController();
  await Promise.race([once(child, 'exit'), sleep(5000, undefined, { signal: timer.signal }).catch(() => undefined)]);
  timer.abort();
}
