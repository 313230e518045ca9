import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes, randomInt } from 'node:crypto';
import { EventEmitter, once } from 'node:events';
import { closeSync, openSync, readFileSync, readSync } from 'node:fs';
import { mkdtemp, rm, stat, writeFile } from 'node:fs/promises';
import { availableParallelism, setPriority, tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Logger } from 'pino';
import { unavailable } from '../../../errors.js';
import type { TracerOptions, TracerSession } from '../contracts.js';
import { BpftraceOutputParser, type BpftraceOutput } from './bpftrace-output.js';
import { BPFTRACE_STRLEN, bpftraceScript, tracepointsOf } from './bpftrace-script.js';
import { FileTail } from './file-tail.js';
import { RecordPipeline } from './record-pipeline.js';
import { availableEvents, ensureTracefs, syscallTracepoints, TRACEFS } from './tracefs.js';
import type { TraceRecord } from './trace-records.js';

/**
 * Per-CPU perf buffer: 16 MiB (pages of 4 KiB, a power of two), some 70 000 records, absorbs bursts
 * while bpftrace catches up (a record with a path takes about 230 bytes).
 */
const PERF_RB_PAGES = 4096;
/** bpftrace goes before the sample: a busy sample is better slowed down than its events dropped. */
const BPFTRACE_NICE = -10;
/** Threads and (process, fd) pairs bpftrace can keep track of at once. */
const MAP_KEYS_MAX = 65536;
/** Compiling the program costs seconds of CPU; on a loaded machine attaching can take tens of seconds. */
const LAUNCH_TIMEOUT_MS = 120_000;
const ARM_TIMEOUT_MS = 10_000;
const DRAIN_TIMEOUT_MS = 10_000;
/** How far apart in time records of different CPUs can arrive (see reorder-buffer.ts). */
const REORDER_WINDOW_SECONDS = 3;
/**
 * bpftrace writes its output in blocks (`-B full`): a write per line cost it a third of its time.
 * Control records carry this much padding, more than a block, so they are read at once.
 */
const OUTPUT_BLOCK_PADDING = 16 * 1024;

/** bpftrace timestamps are CLOCK_MONOTONIC nanoseconds, the clock of process.hrtime. */
function monotonicToEpoch(): (ns: bigint) => number {
  const offset = BigInt(Math.round((performance.timeOrigin + performance.now()) * 1e6)) - process.hrtime.bigint();
  return (ns) => Number(ns + offset) / 1e9;
}

/**
 * One bpftrace process running the behaviour program: launched (compiled and attached) ahead of time,
 * recording nothing until `arm()` gives it the sandbox's cgroup. Compiling costs seconds of CPU, so one
 * program serves analysis after analysis: a session's stop() drains everything of its sandbox and makes
 * the program forget it, and the next arm() starts from nothing. `discard()` ends the program.
 */
export class BpftraceProgram {
  private readonly changes = new EventEmitter();
  private readonly ready = new Set<number>();
  /** CPUs whose drain marker has been read. */
  private readonly drained = new Set<number>();
  private dumped = false;
  private readonly toEpoch = monotonicToEpoch();
  private readonly parser: BpftraceOutputParser;
  private armedCgroup: bigint | null = null;
  /** The session recording now: one at a time. */
  private armed = false;
  private probes = 0;
  /** Records dropped in the current session. */
  private lost = 0;
  private stderr = '';
  private exit: { code: number | null; signal: string | null; early: boolean } | null = null;
  /** Set once we end bpftrace ourselves: an exit before that is a failure. */
  private stopping = false;
  private consumer: ((record: TraceRecord) => void) | null = null;
  private tail: FileTail | null = null;

  private constructor(
    private readonly child: ChildProcess,
    private readonly nonce: number,
    marker: string,
    private readonly log: Logger,
  ) {
    this.parser = new BpftraceOutputParser(marker, this.toEpoch, (output) => this.onOutput(output));
    child.on('exit', (code, signal) => {
      this.exit = { code, signal, early: !this.stopping };
      this.changes.emit('change');
    });
    child.stderr!.setEncoding('utf8');
    child.stderr!.on('data', (chunk: string) => {
      this.stderr = (this.stderr + chunk).slice(-8192);
    });
    // A program waiting for its analysis must not keep the service (or a test) from exiting; while it
    // is launching, armed or stopping, our own timers and promises keep the process alive.
    child.unref();
    (child.stderr as unknown as { unref?: () => void }).unref?.();
  }

  /**
   * Compiles and attaches the program; resolves once every probe is attached. `perfBufferPages` (a
   * power of two) is for tests that need a buffer small enough to overflow.
   */
  static async launch(log: Logger, options: { perfBufferPages?: number } = {}): Promise<BpftraceProgram> {
    await ensureTracefs();
    const syscalls = await syscallTracepoints();
    const nonce = randomInt(1 << 30, 2 ** 31 - 1);
    const marker = randomBytes(6).toString('base64url');
    const script = bpftraceScript({
      ownerPid: process.pid,
      nonce,
      marker,
      hasTracepoint: (name) => syscalls.has(name),
      flushPadding: OUTPUT_BLOCK_PADDING,
    });
    const workDir = await mkdtemp(join(tmpdir(), 'nestbox-bpftrace-'));
    const scriptPath = join(workDir, 'behaviour.bt');
    await writeFile(scriptPath, script);
    const used = new Set(tracepointsOf(script));
    const eventsPath = join(workDir, 'available_events');
    await writeFile(eventsPath, `${(await availableEvents()).filter((e) => used.has(e)).join('\n')}\n`);
    // Standard output is a file (see file-tail.ts); bpftrace's own -o file ignores -B line.
    const outputPath = join(workDir, 'output');
    const output = openSync(outputPath, 'w');
    const child = spawn('setpriv', launchArgs(eventsPath, scriptPath), {
      stdio: ['ignore', output, 'pipe'],
      env: {
        ...process.env,
        BPFTRACE_STRLEN: String(BPFTRACE_STRLEN),
        BPFTRACE_PERF_RB_PAGES: String(options.perfBufferPages ?? PERF_RB_PAGES),
        BPFTRACE_MAP_KEYS_MAX: String(MAP_KEYS_MAX),
      },
    });
    closeSync(output);
    try {
      if (child.pid !== undefined) setPriority(child.pid, BPFTRACE_NICE);
    } catch (error) {
      log.debug({ err: error }, 'could not raise the priority of bpftrace');
    }
    const program = new BpftraceProgram(child, nonce, marker, log);
    try {
      await program.follow(outputPath);
      await program.untilAttached();
    } catch (error) {
      await program.discard();
      throw error;
    } finally {
      // Once attached, bpftrace has read its files and holds its output open: nothing is left behind.
      await rm(workDir, { recursive: true, force: true });
    }
    return program;
  }

  get probeCount(): number {
    return this.probes;
  }

  /** Whether the program can be armed (again): it runs, and no session records. */
  get usable(): boolean {
    return this.exit === null && !this.stopping && !this.armed;
  }

  /** Bytes of output read so far: the output file only grows while the program lives. */
  get outputBytes(): number {
    return this.tail?.bytesRead ?? 0;
  }

  /** Starts recording the cgroup's processes into the events file; one session at a time. */
  async arm(options: TracerOptions): Promise<TracerSession> {
    if (!this.usable) throw unavailable('this bpftrace program cannot be armed: it has ended or is recording', { context: { exit: this.exit } });
    this.armed = true;
    this.lost = 0;
    this.drained.clear();
    this.dumped = false;
    this.armedCgroup = null;
    const cgroupId = (await stat(options.cgroupV2Path, { bigint: true })).ino;
    const pipeline = await RecordPipeline.open(options, REORDER_WINDOW_SECONDS);
    this.consumer = (record) => pipeline.push(record);
    try {
      await this.until(() => this.armedCgroup === cgroupId, ARM_TIMEOUT_MS, () => this.sendArm(cgroupId));
    } catch (error) {
      await pipeline.close(this.toEpoch(process.hrtime.bigint()));
      await this.discard();
      throw error;
    }
    pipeline.info(this.toEpoch(process.hrtime.bigint()), `bpftrace: ${this.probes} probes`);
    let stopping: Promise<{ lost: number }> | null = null;
    const stop = async () => {
      const drained = await this.drain();
      const dumped = await this.dumpTotals();
      // A program that could not confirm it said everything (or forgot the sandbox) serves no other.
      if (!drained || !dumped) await this.discard();
      this.parser.end();
      this.consumer = null;
      this.armedCgroup = null;
      this.armed = false;
      let message: string | undefined;
      if (this.exit?.early) {
        message = `bpftrace ended early (${this.exit.signal ?? this.exit.code}): ${this.stderrTail()}`;
        this.log.error({ cgroup: options.cgroupV2Path, exit: this.exit }, message);
      }
      await pipeline.close(this.toEpoch(process.hrtime.bigint()), message);
      return { lost: this.lost };
    };
    return {
      name: 'ebpf',
      stop: () => (stopping ??= stop()),
    };
  }

  /**
   * Stops recording and waits until bpftrace has read everything recorded: bpftrace reads one buffer
   * per CPU and, told to exit, drops what it has not read yet. A marker is sent from every CPU in
   * turn; each buffer is read in order, so once every marker is in, so is everything before it.
   * False when some buffer was not confirmed: what is left in it must never reach another session.
   */
  private async drain(): Promise<boolean> {
    if (this.exit) return false;
    const online = onlineCpus();
    const cpus = await Promise.all(online.map(async (cpu) => ((await this.sendMarker(cpu)) ? cpu : -1)));
    const marked = cpus.filter((cpu) => cpu >= 0);
    try {
      await this.until(() => marked.every((cpu) => this.drained.has(cpu)), DRAIN_TIMEOUT_MS, () => undefined);
      return marked.length === online.length;
    } catch (error) {
      this.log.warn({ err: error, cpus: marked, drained: [...this.drained] }, 'bpftrace did not confirm reading every buffer');
      return false;
    }
  }

  /** Runs `kill(nonce, 0)` on one CPU; false when this process may not run there. */
  private async sendMarker(cpu: number): Promise<boolean> {
    const child = spawn('taskset', ['--cpu-list', String(cpu), 'sh', '-c', `kill -0 ${this.nonce} 2>/dev/null; exit 0`], {
      stdio: 'ignore',
    });
    const [code] = (await once(child, 'exit')) as [number | null];
    return code === 0;
  }

  /** Ends the program (waiting or after its last session). */
  async discard(): Promise<void> {
    this.stopping = true;
    await this.end();
  }

  /** Kills bpftrace (it has nothing more to say) and reads the rest of its output. */
  private async end(): Promise<void> {
    if (!this.exit) this.child.kill('SIGKILL');
    await this.tail?.end();
    this.tail = null;
  }

  /** Prints the write totals and forgets the sandbox; false when bpftrace did not confirm it. */
  private async dumpTotals(): Promise<boolean> {
    if (this.exit) return false;
    try {
      await this.until(() => this.dumped, DRAIN_TIMEOUT_MS, () => this.signalNonce('SIGCONT'));
      return true;
    } catch (error) {
      this.log.warn({ err: error }, 'bpftrace did not print its write totals');
      return false;
    }
  }

  private signalNonce(signal: NodeJS.Signals): void {
    try {
      process.kill(this.nonce, signal);
    } catch {
      // ESRCH: no process has that pid, as intended.
    }
  }

  /** We read bpftrace's output file as it grows. */
  private async follow(outputPath: string): Promise<void> {
    const deadline = Date.now() + LAUNCH_TIMEOUT_MS;
    while (!this.tail) {
      if (this.exit) throw unavailable(`bpftrace could not start: ${this.stderrTail()}`, { context: { exit: this.exit } });
      if (Date.now() > deadline) throw unavailable('bpftrace did not start in time', { context: { stderr: this.stderrTail() } });
      try {
        this.tail = await FileTail.open(outputPath, (line) => this.parser.line(line));
      } catch {
        await sleep(10);
      }
    }
  }

  private onOutput(output: BpftraceOutput): void {
    switch (output.kind) {
      case 'attached':
        this.probes = output.probes;
        return;
      case 'ready':
        if (output.which === 3) this.armedCgroup = output.value;
        else if (output.which === 4) this.drained.add(Number(output.value));
        else if (output.which === 5) this.dumped = true;
        else this.ready.add(output.which);
        this.changes.emit('change');
        return;
      case 'lost':
        this.lost += output.count;
        this.log.warn({ count: output.count }, 'bpftrace lost events');
        this.consumer?.({ ts: this.toEpoch(process.hrtime.bigint()), tid: 0, op: 'lost', count: output.count });
        return;
      case 'record':
        this.consumer?.(output.record);
        return;
      case 'end':
        return;
    }
  }

  private untilAttached(): Promise<void> {
    // The readiness probes answer our kill(self, 0): asked until both have.
    return this.until(() => this.ready.has(1) && this.ready.has(2), LAUNCH_TIMEOUT_MS, () => process.kill(process.pid, 0));
  }

  /** pread64 on the nonce, a descriptor that cannot exist, fails with EBADF after the probe has seen it. */
  private sendArm(cgroupId: bigint): void {
    try {
      readSync(this.nonce, Buffer.alloc(1), 0, 1, cgroupId);
    } catch {
      // EBADF, as intended.
    }
  }

  private until(done: () => boolean, timeoutMs: number, poke: () => void): Promise<void> {
    return new Promise((resolve, reject) => {
      const check = () => {
        if (done()) finish();
        else if (this.exit) finish(unavailable(`bpftrace exited: ${this.stderrTail()}`, { context: { exit: this.exit } }));
      };
      const finish = (error?: Error) => {
        clearInterval(poker);
        clearTimeout(timer);
        this.changes.off('change', check);
        if (error) reject(error);
        else resolve();
      };
      const poker = setInterval(() => {
        poke();
        check();
      }, 25);
      const timer = setTimeout(
        () => finish(unavailable('bpftrace did not answer in time', { context: { timeoutMs, stderr: this.stderrTail() } })),
        timeoutMs,
      );
      this.changes.on('change', check);
      // Asked at once, not a poll interval later: arming is on the path to the sample's first instruction.
      poke();
      check();
    });
  }

  private stderrTail(): string {
    return this.stderr
      .split('\n')
      .filter((line) => line.trim() !== '' && !line.includes('RLIMIT_MEMLOCK'))
      .slice(-5)
      .join(' | ');
  }
}

/**
 * bpftrace looks every probe up in available_events, re-reading the whole file dozens of times per
 * probe; with over a hundred probes that is seconds of CPU. In a mount namespace of its own it reads
 * a copy listing only the tracepoints the program uses. If we die, so does it (parent death signal),
 * instead of idling attached forever.
 */
function launchArgs(eventsPath: string, scriptPath: string): string[] {
  return [
    '--pdeathsig',
    'KILL',
    'unshare',
    '--mount',
    '--propagation',
    'private',
    'sh',
    '-c',
    'mount --bind "$1" "$2" && shift 2 && exec "$@"',
    'sh',
    eventsPath,
    `${TRACEFS}/available_events`,
    'bpftrace',
    '-B',
    'full',
    '--no-warnings',
    scriptPath,
  ];
}

function onlineCpus(): number[] {
  try {
    return parseCpuList(readFileSync('/sys/devices/system/cpu/online', 'utf8'));
  } catch {
    return Array.from({ length: availableParallelism() }, (_, i) => i);
  }
}

/** The kernel's CPU list format: `0-3,5`. */
function parseCpuList(text: string): number[] {
  return text
    .trim()
    .split(',')
    .filter(Boolean)
    .flatMap((range) => {
      const [from, to = from] = range.split('-').map(Number) as [number, number?];
      return Array.from({ length: to - from + 1 }, (_, i) => from + i);
    });
}
