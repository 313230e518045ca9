import { spawn, type ChildProcess } from 'node:child_process';
import { EventEmitter } from 'node:events';
import { mkdtemp, rm, stat } from 'node:fs/promises';
import { setPriority, tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Logger } from 'pino';
import { unavailable } from '../../../errors.js';
import { cgroupLevel } from './cgroup-level.js';
import { ensureMonitor } from './monitor-build.js';
import { parseMonitorLine, type MonitorControl } from './monitor-output.js';

/** Loading and attaching takes well under a second; on a loaded machine, or while building, longer. */
const LAUNCH_TIMEOUT_MS = 120_000;
const ARM_TIMEOUT_MS = 10_000;
const DISARM_TIMEOUT_MS = 30_000;
/** The monitor goes before the sample: a busy sample is better slowed down than its records dropped. */
const MONITOR_NICE = -10;

export interface MonitorOptions {
  /** Ring buffer size, a power of two of at least a page: for tests that need a buffer that overflows. */
  ringBytes?: number;
  /** Where the built monitor is kept (see monitor-build.ts). */
  buildDir?: string;
}

/**
 * nestbox's monitor (native/monitor), the process: loaded and attached once, recording nothing until
 * `arm()` gives it a cgroup. It answers commands on its standard output and writes each session's
 * records to a file of ours, read as it grows. `discard()` ends it.
 */
export class MonitorLoader {
  private readonly changes = new EventEmitter();
  private readonly controls: MonitorControl[] = [];
  private carry = '';
  private stderr = '';
  private exit: { code: number | null; signal: string | null; early: boolean } | null = null;
  private stopping = false;
  private armed = false;
  private sessions = 0;

  private constructor(
    private readonly child: ChildProcess,
    /** Our own folder for the sessions' record files. */
    private readonly workDir: string,
    private readonly log: Logger,
  ) {
    child.on('exit', (code, signal) => {
      this.exit = { code, signal, early: !this.stopping };
      this.changes.emit('change');
    });
    child.stdout!.setEncoding('utf8');
    child.stdout!.on('data', (chunk: string) => this.read(chunk));
    child.stderr!.setEncoding('utf8');
    child.stderr!.on('data', (chunk: string) => {
      this.stderr = (this.stderr + chunk).slice(-8192);
    });
    child.stdin!.on('error', () => undefined);
    // A monitor waiting for its analysis must not keep the service (or a test) from exiting; while it
    // is launching, armed or stopping, our own timers and promises keep the process alive.
    child.unref();
    for (const stream of [child.stdout, child.stderr, child.stdin]) (stream as unknown as { unref?: () => void }).unref?.();
  }

  /** Builds the monitor if needed, starts it, and resolves once its programs are attached. */
  static async launch(log: Logger, options: MonitorOptions = {}): Promise<MonitorLoader> {
    const binary = await ensureMonitor(options.buildDir);
    // Records in frames: the busiest in binary, read without parsing text (see monitor-frames.ts).
    const args = ['-f', ...(options.ringBytes ? ['-b', String(options.ringBytes)] : [])];
    const workDir = await mkdtemp(join(tmpdir(), 'nestbox-monitor-'));
    const child = spawn(binary, args, { stdio: ['pipe', 'pipe', 'pipe'] });
    try {
      if (child.pid !== undefined) setPriority(child.pid, MONITOR_NICE);
    } catch (error) {
      log.debug({ err: error }, 'could not raise the priority of the monitor');
    }
    const program = new MonitorLoader(child, workDir, log);
    try {
      await program.answer('ready', LAUNCH_TIMEOUT_MS);
    } catch (error) {
      await program.discard();
      throw error;
    }
    return program;
  }

  /** Whether the monitor can be armed (again): it runs, and no session records. */
  get usable(): boolean {
    return this.exit === null && !this.stopping && !this.armed;
  }

  /** The monitor process's id, for measuring what it costs (bench/tracer.ts). */
  get pid(): number | undefined {
    return this.child.pid;
  }

  /**
   * Starts recording the cgroup's tasks (and those of cgroups below it) into a records file of ours, whose
   * path it resolves with; the file is read as it grows (records-decoding.ts) and removed by `forget()`.
   * One session at a time. A monitor that could not be armed is ended.
   */
  async arm(cgroupV2Path: string): Promise<string> {
    if (!this.usable) throw unavailable('this monitor cannot be armed: it has ended or is recording', { context: { exit: this.exit } });
    this.armed = true;
    const recordsPath = join(this.workDir, `records-${++this.sessions}.bin`);
    try {
      const cgroupId = (await stat(cgroupV2Path, { bigint: true })).ino;
      this.send(`arm ${cgroupId} ${cgroupLevel(cgroupV2Path)} ${recordsPath}`);
      const armed = await this.answer('armed', ARM_TIMEOUT_MS);
      if (armed.cgroup !== String(cgroupId)) throw unavailable('the monitor armed another cgroup', { context: { armed, cgroupId } });
      return recordsPath;
    } catch (error) {
      await this.discard();
      throw error;
    }
  }

  /**
   * Stops recording; resolves once the monitor has written every record of the session and closed the
   * file, with the count of records the kernel dropped. A monitor that could not confirm it sent
   * everything is ended: what it holds must never reach another session.
   */
  async disarm(): Promise<{ lost: number }> {
    try {
      this.send('disarm');
      const disarmed = await this.answer('disarmed', DISARM_TIMEOUT_MS);
      if (!disarmed.confirmed) await this.discard();
      return { lost: disarmed.lost };
    } catch (error) {
      await this.discard();
      throw error;
    } finally {
      this.armed = false;
    }
  }

  /** Removes a session's records file once it has been read. */
  async forget(recordsPath: string): Promise<void> {
    await rm(recordsPath, { force: true });
  }

  /** Ends the monitor (waiting or after its last session). */
  async discard(): Promise<void> {
    this.stopping = true;
    await rm(this.workDir, { recursive: true, force: true });
    if (this.exit) return;
    // Waited for: the child must keep the event loop alive until it is gone.
    this.child.ref();
    this.child.kill('SIGKILL');
    await new Promise<void>((resolve) => {
      if (this.exit) resolve();
      else this.changes.once('change', () => resolve());
    });
  }

  private send(command: string): void {
    this.child.stdin!.write(`${command}\n`);
  }

  /** Control lines, on the monitor's standard output. */
  private read(chunk: string): void {
    const lines = (this.carry + chunk).split('\n');
    this.carry = lines.pop() ?? '';
    for (const line of lines) {
      if (line === '') continue;
      const parsed = parseMonitorLine(line);
      if (parsed && 'ctl' in parsed) {
        this.controls.push(parsed);
        this.changes.emit('change');
      } else {
        this.log.warn({ line: line.slice(0, 200) }, 'unexpected line from the monitor');
      }
    }
  }

  /** Waits for the monitor's next control line of that kind (earlier ones of other kinds are dropped). */
  private answer<K extends MonitorControl['ctl']>(kind: K, timeoutMs: number): Promise<Extract<MonitorControl, { ctl: K }>> {
    return new Promise((resolve, reject) => {
      const check = () => {
        while (this.controls.length > 0) {
          const control = this.controls.shift()!;
          if (control.ctl === kind) return finish(undefined, control as Extract<MonitorControl, { ctl: K }>);
          if (control.ctl === 'error') return finish(unavailable(`the monitor refused: ${control.message}`));
        }
        if (this.exit) finish(unavailable(`the monitor exited: ${this.stderrTail()}`, { context: { exit: this.exit } }));
      };
      const finish = (error?: Error, control?: Extract<MonitorControl, { ctl: K }>) => {
        clearTimeout(timer);
        this.changes.off('change', check);
        if (error) reject(error);
        else resolve(control!);
      };
      const timer = setTimeout(
        () => finish(unavailable(`the monitor did not answer ${kind} in time`, { context: { timeoutMs, stderr: this.stderrTail() } })),
        timeoutMs,
      );
      this.changes.on('change', check);
      check();
    });
  }

  private stderrTail(): string {
    return this.stderr
      .split('\n')
      .filter((line) => line.trim() !== '')
      .slice(-5)
      .join(' | ');
  }
}
