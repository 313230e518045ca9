import type { ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { chmod, chown, copyFile, lstat, mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import { basename, join } from 'node:path';
import type { Readable, Writable } from 'node:stream';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Logger } from 'pino';
import { EVENTS_FILE } from '../../report/events.js';
import { invalidInput } from '../../errors.js';
import { choosePackage, type AnalysisPackage, type PackageContext } from '../../analysis/packages/index.js';
import type { DroppedFileLimits } from '../dropped/budget.js';
import type { DroppedEntry } from '../dropped/entry.js';
import { droppedFileWarnings } from '../dropped/warnings.js';
import type { AnalysisRequest, MachineSession, RunResult } from '../types.js';
import { AnalysisLog } from './analysis-log.js';
import { MachineCgroups, type CgroupLayout } from './cgroups.js';
import { runCommand } from '../host/command.js';
import type { CreateTaskNetwork, TaskNetwork, Tracer, TracerSession } from '../host/contracts.js';
import { collectDroppedFiles, snapshotUpper, type FilesJsonLine } from './dropped-files.js';
import { GUEST_INIT_PATH, GUEST_INIT_REAL_PATH } from './guest-init.js';
import type { HostIdRange } from './host-ids.js';
import { machineId } from '../host/machine-id.js';
import type { PreparedNetwork, SpareNetwork } from '../host/network/index.js';
import { ensureRegularFiles, hostPathInMachine, writeInMachine } from './machine-path.js';
import { dumpProcessMemory } from './memory-dump.js';
import { MachineDisk } from './overlay.js';
import { recordOwner } from '../host/ownership.js';
import { makeMachineDir } from './run-dir.js';
import { savedRebootState, saveRebootState } from './reboot-state.js';
import { guestEnvironment, spawnSandbox, type SandboxSpec } from './sandbox.js';
import { ScreenshotTaker } from './screenshots.js';
import type { LinuxSettings } from './settings.js';
import { pickUnpackedFile } from './unpacked.js';

/** What every session of one machinery shares. */
export interface MachineContext {
  settings: LinuxSettings;
  guestRoot: string;
  /** Host path of the compiled init, bound over /sbin/init. */
  initPath: string;
  seccompPath: string;
  /** The user namespace launcher (native/userns-exec.c). */
  launcher: string;
  /** Host ids of the machine's ids: root inside is `hostIds.base` on the host. */
  hostIds: HostIdRange;
  cgroupLayout: CgroupLayout;
  hostname: string;
  internetInterface: string;
  archivePasswords: string[];
  droppedFileLimits: DroppedFileLimits;
  createTaskNetwork: CreateTaskNetwork;
  /** A network made ahead for the next task, when the machinery keeps one. */
  spareNetwork?: SpareNetwork;
  tracer?: Tracer;
}

/** Where the sample is put inside the machine, as a user would have downloaded it. */
const SAMPLE_DIR = '/tmp';
const DISPLAY_READY_MS = 10_000;
const UNPACK_TIMEOUT_MS = 120_000;
const TRACER_START_MS = 30_000;
/** The sample's sandbox waits on this fd until the tracer records. */
const BLOCK_FD = 4;
const INFO_FD = 5;
/** A 1280x800 grab is 4 MB; anything far larger is not our X server's. */
const MAX_GRAB_BYTES = 64 * 2 ** 20;
/** Files of the machine the sandbox binds over (init, name resolution): checked to be plain files first. */
const BOUND_FILES = [GUEST_INIT_REAL_PATH, '/etc/resolv.conf', '/etc/hosts', '/etc/hostname'];
/** Where a tracer running inside the machine writes its log. */
const TRACE_LOG = '/run/nestbox-trace.log';
/** Bound over the parts of /proc the machine may not see. */
const EMPTY_FILE = 'empty';
const EMPTY_FOLDER = 'empty.d';

/** Everything one task's machine holds; released by destroy() in reverse order. */
export class LinuxSession implements MachineSession {
  private network: TaskNetwork | undefined;
  private display: ChildProcess | undefined;
  private sample: ChildProcess | undefined;
  private tracerSession: TracerSession | undefined;
  /** The tracer starting (armed on the sample's cgroup while the machine is made); null when it did not start. */
  private tracerStarting: Promise<TracerSession | null> = Promise.resolve(null);
  private screenshots: ScreenshotTaker | undefined;
  private baseline = new Map<string, string>();
  private readonly memoryFiles: FilesJsonLine[] = [];
  private readonly warnings: string[] = [];
  private stopped: Promise<void> | undefined;
  /** The virtual display coming up; undefined until it is started. */
  private displayReady: Promise<void> | undefined;
  /** Set once the sample's run is over: a display that comes up later takes no screenshots. */
  private runOver = false;
  private traceLog: { inMachine: string; host: string } | undefined;
  private destroyed: Promise<void> | undefined;
  private readonly log: Logger;
  readonly analysisLog: AnalysisLog;
  readonly disk: MachineDisk;
  readonly cgroups: MachineCgroups;
  /** Inside the machine. */
  private samplePath = '';
  private package: AnalysisPackage | undefined;
  /** libmagic's type of the sample, looked up while the machine is being made. */
  private sampleType: Promise<string> = Promise.resolve('');
  /** The package that starts the sample: the chosen one, or for archives the one of the file inside. */
  private runner: AnalysisPackage | undefined;

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
    const [network, ...others] = await Promise.allSettled([
      this.takeNetwork(),
      this.disk.mount(this.context.guestRoot, settings.disk_mb * 2 ** 20, this.rootId, restoreFrom),
      this.cgroups.create({ memoryBytes: settings.memory_mb * 2 ** 20, pidsMax: settings.pids_max, cpuPercent: settings.cpu_percent }),
    ]);
    if (network.status === 'fulfilled') this.network = network.value;
    for (const step of [network, ...others]) if (step.status === 'rejected') throw step.reason;
    // The sample's cgroup exists and stays empty until the sample's sandbox joins it: the tracer is armed meanwhile.
    this.tracerStarting = this.startTracer();
    await this.writeBoundFiles(this.network!.gatewayAddress);
    mark('network, disk, cgroups');
    await ensureRegularFiles(this.disk.root, BOUND_FILES, this.rootId);
    await this.placeSample();
    mark('sample placed');
    // Xvfb takes about 0.15 s of CPU to be ready. A sample that needs it (or may: an archive's file is not
    // known yet) waits for it, so it starts now; for others it starts once the sample runs, off the way to
    // the sample's first instruction.
    if (this.package?.needsDisplay || this.package?.unpack) void this.launchDisplay();
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

  /**
   * The files bound over the guest's own (init, resolv.conf, hosts, hostname) live on the machine's tmpfs,
   * beside the upper layer: /proc/self/mountinfo shows each bind's source path, and that path then names
   * nothing of the host.
   */
  private async writeBoundFiles(gateway: string): Promise<void> {
    const { hostname } = this.context;
    const dir = this.boundFilesDir;
    await mkdir(dir);
    await copyFile(this.context.initPath, join(dir, 'init'));
    await chmod(join(dir, 'init'), 0o755);
    await writeFile(join(dir, 'resolv.conf'), `nameserver ${gateway}\n`);
    await writeFile(join(dir, 'hostname'), `${hostname}\n`);
    await writeFile(join(dir, 'hosts'), `127.0.0.1\tlocalhost\n127.0.1.1\t${hostname}\n::1\tlocalhost ip6-localhost ip6-loopback\n`);
    await writeFile(join(dir, EMPTY_FILE), '', { mode: 0o444 });
    await mkdir(join(dir, EMPTY_FOLDER), { mode: 0o555 });
    // Inside they stand where root's own files would: owned by the machine's root, not by nobody.
    for (const name of ['init', 'resolv.conf', 'hostname', 'hosts', EMPTY_FILE, EMPTY_FOLDER]) await chown(join(dir, name), this.rootId, this.rootId);
  }

  /** The host id of root inside the machine. */
  private get rootId(): number {
    return this.context.hostIds.base;
  }

  private get boundFilesDir(): string {
    return join(this.disk.tmpfs, 'bind');
  }

  /** Copies the sample into the machine and picks the package that runs it. */
  private async placeSample(): Promise<void> {
    const { request } = this;
    let target;
    if (request.category === 'file' && !request.samplePath && !request.rebootFrom) throw invalidInput('a file task needs its sample', { context: { taskId: request.taskId } });
    if (request.category === 'file' && request.samplePath) {
      const name = basename(request.samplePath).replace(/[\u0000-\u001f]/g, '_') || 'sample';
      this.samplePath = `${SAMPLE_DIR}/${name}`;
      await writeInMachine(this.disk.root, this.samplePath, await readFile(request.samplePath), 0o755, this.rootId);
      target = { fileName: name, fileType: await this.sampleType };
      this.analysisLog.info(`sample ${this.samplePath}: ${target.fileType}`);
    }
    this.package = choosePackage({ requested: request.package, category: request.category, target, reboot: Boolean(request.rebootFrom) });
    this.analysisLog.info(`analysis package: ${this.package.name}`);
  }

  private sandboxSpec(leaf: 'sample' | 'support', argv: string[], overrides: Partial<SandboxSpec> = {}): SandboxSpec {
    const { settings } = this.context;
    return {
      root: this.disk.root,
      rootReadOnly: false,
      netnsPath: this.network!.netnsPath,
      procsFiles: this.cgroups.procsFiles(leaf),
      hostname: this.context.hostname,
      seccompPath: this.context.seccompPath,
      launcher: this.context.launcher,
      hostIds: this.context.hostIds,
      covers: { emptyFile: join(this.boundFilesDir, EMPTY_FILE), emptyFolder: join(this.boundFilesDir, EMPTY_FOLDER) },
      roBinds: [
        { source: join(this.boundFilesDir, 'init'), dest: GUEST_INIT_PATH },
        { source: join(this.boundFilesDir, 'resolv.conf'), dest: '/etc/resolv.conf' },
        { source: join(this.boundFilesDir, 'hosts'), dest: '/etc/hosts' },
        { source: join(this.boundFilesDir, 'hostname'), dest: '/etc/hostname' },
      ],
      tmpfs: { '/dev/shm': Math.min(64, settings.disk_mb) * 2 ** 20 },
      env: guestEnvironment(settings.screenshots),
      cwd: SAMPLE_DIR,
      argv,
      ...overrides,
    };
  }

  /** Starts the display once (when the machine has screenshots); the promise never rejects. */
  private launchDisplay(): Promise<void> {
    if (!this.context.settings.screenshots) return Promise.resolve();
    this.displayReady ??= this.startDisplay().catch((error: unknown) => this.warn(`no virtual display: ${(error as Error).message}`));
    return this.displayReady;
  }

  /** Xvfb in a sandbox of its own (guest root read-only, private /tmp) in the machine's network namespace. */
  private async startDisplay(): Promise<void> {
    const DISPLAY_FD = 4;
    const spec = this.sandboxSpec('support', ['Xvfb', ':0', '-nolisten', 'tcp', '-screen', '0', '1280x800x24', '-displayfd', String(DISPLAY_FD)], {
      root: this.context.guestRoot,
      rootReadOnly: true,
      tmpfs: { '/tmp': 16 * 2 ** 20 },
      cwd: '/',
      extraPipes: 1,
    });
    const display = spawnSandbox(spec);
    this.display = display;
    display.stdout?.resume();
    display.stderr?.resume();
    const ready = await new Promise<boolean>((resolve) => {
      const timer = setTimeout(() => resolve(false), DISPLAY_READY_MS);
      display.stdio[DISPLAY_FD]?.once('data', () => {
        clearTimeout(timer);
        resolve(true);
      });
      display.once('exit', () => {
        clearTimeout(timer);
        resolve(false);
      });
    });
    if (!ready) {
      // A display only started beside a sample that has ended by now (and was killed with the machine)
      // was not needed: no error. One the sample needs, or that failed while the sample ran, is.
      if (this.runOver && !this.runner?.needsDisplay) this.analysisLog.debug('the sample ended before the virtual display was up: no screenshots');
      else this.warn('the virtual display did not start: no screenshots');
      return;
    }
    this.screenshots = new ScreenshotTaker(() => this.grabScreen(), this.request.paths.shots, this.context.settings.screenshot_interval * 1000, this.log);
  }

  /** The screen in xwd format, grabbed from a sandbox on the read-only guest root; null on failure. */
  private async grabScreen(): Promise<Buffer | null> {
    const child = spawnSandbox(
      this.sandboxSpec('support', ['xwd', '-root', '-silent', '-display', ':0'], { root: this.context.guestRoot, rootReadOnly: true, cwd: '/' }),
    );
    const chunks: Buffer[] = [];
    let size = 0;
    child.stdout?.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size <= MAX_GRAB_BYTES) chunks.push(chunk);
      else child.kill('SIGKILL');
    });
    child.stderr?.resume();
    const [code] = (await once(child, 'exit')) as [number | null];
    return code === 0 && size <= MAX_GRAB_BYTES && chunks.length > 0 ? Buffer.concat(chunks) : null;
  }

  async run(signal: AbortSignal): Promise<RunResult> {
    const { request } = this;
    const context: PackageContext = {
      path: this.samplePath,
      url: request.url ?? '',
      options: request.options,
      passwords: this.context.archivePasswords,
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

  /** The sample's command line; archives are unpacked first (untraced) and the file inside is run. */
  private async commandToRun(context: PackageContext): Promise<string[]> {
    const pkg = this.package!;
    this.runner = pkg;
    if (!pkg.unpack) return pkg.command(context);
    const step = pkg.unpack(context);
    const code = await this.runSupport(step.argv, UNPACK_TIMEOUT_MS);
    if (code !== 0) throw new Error(`cannot unpack the archive (exit ${code})`);
    const picked = await pickUnpackedFile(this.disk.root, step.into, context.options.file);
    await chmod(await hostPathInMachine(this.disk.root, picked.path), 0o755);
    this.analysisLog.info(`unpacked; running ${picked.path} (${picked.fileType}) with package ${picked.package.name}`);
    this.runner = picked.package;
    return picked.package.command({ ...context, path: picked.path });
  }

  /** Runs a helper command in the machine, outside the traced cgroup; resolves with its exit code. */
  private async runSupport(argv: string[], timeoutMs: number): Promise<number> {
    const child = spawnSandbox(this.sandboxSpec('support', argv));
    child.stdout?.on('data', (chunk: Buffer) => this.analysisLog.output(chunk));
    child.stderr?.on('data', (chunk: Buffer) => this.analysisLog.output(chunk));
    const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
    const [code] = (await once(child, 'exit')) as [number | null];
    clearTimeout(timer);
    return code ?? 128;
  }

  private async runSample(command: string[], signal: AbortSignal): Promise<RunResult['ended']> {
    const { request } = this;
    // The sandbox is set up while the tracer starts; it runs the sample once the tracer records.
    let child = this.spawnBlocked(command);
    const mark = phaseTimer(this.log);
    // Other samples start at once; the display comes up beside them and screenshots begin when it is there.
    const [argv] = await Promise.all([this.tracedCommand(command), this.runner?.needsDisplay ? this.launchDisplay() : undefined]);
    mark('tracer and display ready');
    if (argv !== command) {
      // A tracer that launches the sample itself (strace): the waiting sandbox is replaced by one running it.
      this.analysisLog.info('the tracer starts the sample itself (a sample can notice it is traced)');
      // The launcher dies first, so nothing new can appear; then whatever it had made (its pid 1 may not
      // yet know to die with it) goes with the cgroup.
      child.kill('SIGKILL');
      await waitForExit(child);
      await this.cgroups.kill('sample');
      child = this.spawnBlocked(argv);
    }
    const exited = once(child, 'exit').then(() => undefined, () => undefined);
    await this.moveLauncherAside(child);
    this.analysisLog.info(`running: ${JSON.stringify([...argv])}`);
    (child.stdio[BLOCK_FD] as Writable | null)?.end('go');
    void this.launchDisplay().then(() => {
      if (!this.runOver) this.screenshots?.start();
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

  /**
   * The bwrap launcher (outside the machine's namespaces, waiting for the sandbox) joins the support leaf
   * once the sandbox's pid 1 exists, so the sample's cgroup, and the behaviour traced in it, hold only
   * the machine's init and the sample's processes.
   */
  private async moveLauncherAside(child: ChildProcess): Promise<void> {
    const info = (child.stdio as Array<Readable | Writable | null | undefined>)[INFO_FD] as Readable | null | undefined;
    if (!info || child.pid === undefined) return;
    const started = await new Promise<boolean>((resolve) => {
      let text = '';
      info.on('data', (chunk: Buffer) => {
        text += chunk.toString();
        if (/"child-pid"\s*:\s*\d+/.test(text)) resolve(true);
      });
      info.once('end', () => resolve(false));
      child.once('exit', () => resolve(false));
    });
    if (!started) return;
    for (const file of this.cgroups.procsFiles('support')) await writeFile(file, String(child.pid)).catch(() => undefined);
  }

  /** The sample's sandbox, set up and waiting on its block fd before it starts argv. */
  private spawnBlocked(argv: string[]): ChildProcess {
    const child = spawnSandbox(this.sandboxSpec('sample', argv, { extraPipes: 2, blockFd: BLOCK_FD, infoFd: INFO_FD }));
    child.stdout?.on('data', (chunk: Buffer) => this.analysisLog.output(chunk));
    child.stderr?.on('data', (chunk: Buffer) => this.analysisLog.output(chunk));
    this.sample = child;
    return child;
  }

  /** The bwrap launcher exits once init (and so every process of the sample) has. */
  private async allExited(): Promise<'exited'> {
    while (await this.cgroups.populated('sample')) await sleep(20);
    return 'exited';
  }

  private async startTracer(): Promise<TracerSession | null> {
    const { tracer } = this.context;
    if (!tracer) return null;
    const starting = tracer.start({
      cgroupV2Path: this.cgroups.v2Path('sample'),
      eventsPath: join(this.request.paths.dir, EVENTS_FILE),
      log: this.log,
    });
    const timer = new AbortController();
    try {
      const late = sleep(TRACER_START_MS, 'late' as const, { signal: timer.signal });
      const started = await Promise.race([starting, late]);
      if (started === 'late') {
        // A tracer that comes up after all is stopped at once: nothing may keep running after the task.
        starting.then((session) => session.stop()).catch(() => undefined);
        throw new Error(`not ready after ${TRACER_START_MS / 1000} s`);
      }
      this.tracerSession = started;
      this.analysisLog.info(`tracing with ${started.name}`);
      return started;
    } catch (error) {
      this.warn(`the tracer did not start, no behaviour is recorded: ${(error as Error).message}`);
      return null;
    } finally {
      timer.abort();
    }
  }

  /** The sample's command line, under the tracer when the tracer must launch it itself. */
  private async tracedCommand(command: string[]): Promise<string[]> {
    const session = await this.tracerStarting;
    return session?.wrap ? this.insideMachine(session.wrap(command)) : command;
  }

  /**
   * A tracer that launches the sample (strace) runs inside the machine and cannot write to the host path
   * it was given: its log goes to the machine's own size-limited disk instead, and is handed back to the
   * tracer (copied to that host path) before it stops.
   */
  private insideMachine(argv: string[]): string[] {
    const output = argv.indexOf('-o');
    if (output < 0 || output + 1 >= argv.length) return argv;
    this.traceLog = { inMachine: TRACE_LOG, host: argv[output + 1]! };
    return [...argv.slice(0, output + 1), TRACE_LOG, ...argv.slice(output + 2)];
  }

  private async handBackTraceLog(): Promise<void> {
    if (!this.traceLog) return;
    const inUpper = join(this.disk.upper, this.traceLog.inMachine);
    // The sample may have put a link there: only a regular file is copied, never what a link points to.
    const isFile = await lstat(inUpper).then((stat) => stat.isFile(), () => false);
    if (!isFile) return this.warn('the tracer left no log in the machine');
    await copyFile(inUpper, this.traceLog.host).catch((error: Error) => this.warn(`cannot read the tracer's log: ${error.message}`));
  }

  /** Last screenshot, memory dumps of the frozen sample, then nothing of the sample runs any more. */
  private async finishRun(): Promise<void> {
    this.runOver = true;
    await this.screenshots?.stop();
    if (this.request.memory) await this.dumpMemory();
    await this.cgroups.kill();
  }

  private async dumpMemory(): Promise<void> {
    if (!(await this.cgroups.populated('sample'))) {
      this.analysisLog.info('memory: no process of the sample was left to dump');
      return;
    }
    await this.cgroups.freeze('sample');
    for (const pid of await this.samplePids()) {
      const name = `${pid}.dmp`;
      const dumped = await dumpProcessMemory(pid, join(this.request.paths.memory, name)).catch(() => null);
      if (!dumped) continue;
      this.memoryFiles.push({ path: `memory/${name}`, filepath: null, pids: [pid] });
      this.analysisLog.info(`memory: dumped process ${pid} (${dumped.bytes} bytes in ${dumped.regions} regions)`);
    }
  }

  /** Host pids of the sample's processes: the sample leaf less the launcher and the init. */
  private async samplePids(): Promise<number[]> {
    const launcher = this.sample?.pid;
    const pids = await this.cgroups.pids('sample');
    const parents = await Promise.all(pids.map((pid) => parentPid(pid)));
    const init = pids.filter((_, index) => parents[index] === launcher);
    return pids.filter((pid) => pid !== launcher && !init.includes(pid));
  }

  async stop(): Promise<void> {
    this.stopped ??= this.stopEverything();
    await this.stopped;
  }

  private async stopEverything(): Promise<void> {
    this.runOver = true;
    await this.screenshots?.stop().catch(() => undefined);
    // Launchers first (one may not have joined its cgroup yet), then everything in the machine's cgroups.
    for (const child of [this.sample, this.display]) if (child && child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    await this.cgroups.kill().catch((error: unknown) => this.log.warn({ err: error }, 'cannot kill the machine'));
    // A tracer still starting is waited for, so that it is stopped too.
    await this.tracerStarting;
    if (this.tracerSession) {
      const session = this.tracerSession;
      this.tracerSession = undefined;
      await this.handBackTraceLog();
      try {
        const { lost } = await session.stop();
        if (lost > 0) this.warn(`the tracer dropped ${lost} events`);
      } catch (error) {
        this.warn(`the tracer failed to stop cleanly: ${(error as Error).message}`);
      }
    }
    await Promise.all([this.sample, this.display].map((child) => waitForExit(child)));
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
        exclude: new Set(this.traceLog ? [this.traceLog.inMachine] : []),
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
    const shots = this.screenshots?.taken ?? 0;
    for (let index = 1; index <= shots; index++) lines.push({ path: `shots/${String(index).padStart(4, '0')}.jpg`, filepath: null, pids: [] });
    lines.push(...this.memoryFiles);
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

async function fileType(path: string): Promise<string> {
  const result = await runCommand(['file', '--brief', '--', path], { env: { ...process.env, LC_ALL: 'C' } });
  return result.code === 0 ? result.stdout.trim() : 'data';
}

async function parentPid(pid: number): Promise<number> {
  const stat = await readFile(`/proc/${pid}/stat`, 'utf8').catch(() => '');
  return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1] ?? 0);
}

async function waitForExit(child: ChildProcess | undefined): Promise<void> {
  if (!child || child.exitCode !== null || child.signalCode !== null) return;
  const timer = new AbortController();
  await Promise.race([once(child, 'exit'), sleep(5000, undefined, { signal: timer.signal }).catch(() => undefined)]);
  timer.abort();
}
