import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import { chownSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import type { Readable, Stream, Writable } from 'node:stream';
import { setTimeout as sleep } from 'node:timers/promises';
import type { DroppedFileLimits } from '../dropped/budget.js';
import type { UnrecordedCalls } from '../../report/supervisor-log.js';

/**
 * The sample's supervisor (native/supervisor.c), one per task, outside the sandbox. It is started before
 * the sample's sandbox, which inherits one end of its socket pair (see native/init.c); it answers the
 * sample's long sleeps at once and shortens its long timers and waits, copies the programs the sample runs and the files it deletes into the
 * machine's capture folder, and stops each exiting process until `onExit` has dumped it.
 * Its record is a JSON line per event; the session turns them into log lines, dropped files and dumps.
 */
export interface SupervisorOptions {
  program: string;
  /** Host id of the machine's root: the supervisor runs as it once its folders are open. */
  rootId: number;
  /** The machine's merged root, its upper layer and the guest root (the lower layer), on the host. */
  merged: string;
  upper: string;
  lower: string;
  /** nestbox's own files bound into the machine: never captured. */
  ownFilesDir: string;
  /** Made here, owned by the machine's root. */
  captureDir: string;
  sleepThresholdSeconds: number;
  limits: DroppedFileLimits;
  /**
   * Watch executions and deletions, timers and waits. Not under strace: its own seccomp filter traces
   * these calls, and a notification takes precedence over a trace stop, so strace would lose them.
   */
  watchFiles: boolean;
  /** Set when each process is to be dumped as it exits. */
  onExit?: (pid: number) => Promise<void>;
  onSleep: (sleep: ShortenedSleep) => void;
  /** At its end: the shortened calls past its records (the first 200), counted by process and call. */
  onUnrecorded: (calls: UnrecordedCalls) => void;
  onCapture: (file: CapturedFile) => void;
  onProblem: (message: string) => void;
}

/** Sleeps the supervisor ends at once. */
export const SLEEP_CALLS = ['nanosleep', 'clock_nanosleep'] as const;
/** Timers whose first expiry it brings forward. */
export const TIMER_CALLS = ['alarm', 'setitimer', 'timer_settime', 'timerfd_settime'] as const;
/** Waits it ends at the threshold, or at once when there is nothing to wait on. */
export const WAIT_CALLS = ['select', 'pselect6', 'poll', 'ppoll', 'epoll_wait', 'epoll_pwait', 'epoll_pwait2'] as const;

export interface ShortenedSleep {
  pid: number;
  call: (typeof SLEEP_CALLS)[number] | (typeof TIMER_CALLS)[number] | (typeof WAIT_CALLS)[number];
  /** What the sample asked for (what was left of it, for an absolute deadline). */
  seconds: number;
  /** Unix time of the call. */
  time: number;
}

export interface CapturedFile {
  reason: 'exec' | 'delete';
  pid: number;
  /** The path in the machine it ran from or was deleted at (for a descriptor: what the process sees, `/memfd:x (deleted)`). */
  filepath: string;
  /** Host path of the copy, which holds the first `kept` bytes. */
  hostPath: string;
  size: number;
  kept: number;
  sha256: string;
}

type SupervisorEvent =
  | ({ event: 'sleep' } & ShortenedSleep)
  | { event: 'capture'; reason: 'exec' | 'delete'; pid: number; path: string; file: string; size: number; kept: number; sha256: string }
  | { event: 'missed'; reason: string; pid: number; path: string; error: string }
  | ({ event: 'unrecorded' } & UnrecordedCalls)
  | { event: 'exit'; pid: number }
  | { event: 'ready' };

export class SampleSupervisor {
  private stopping = false;
  /** Resolved once its output is read to the end. */
  private ended: Promise<void> = Promise.resolve();

  private constructor(
    private readonly child: ChildProcess,
    private readonly options: SupervisorOptions,
  ) {}

  /** Starts the supervisor; `channel` goes to the sample's sandbox (SandboxSpec.supervisorChannel). */
  static start(options: SupervisorOptions): { supervisor: SampleSupervisor; channel: Stream } {
    // Synchronous, like the spawn: the supervisor reads its folders while the sandbox is being set up.
    mkdirSync(options.captureDir, { recursive: true, mode: 0o700 });
    chownSync(options.captureDir, options.rootId, options.rootId);
    const { limits } = options;
    const argv = [
      String(options.rootId), options.merged, options.upper, options.lower, options.ownFilesDir, options.captureDir,
      String(Math.round(options.sleepThresholdSeconds * 1000)),
      String(limits.max_file_size), String(limits.max_total_size), String(limits.max_files),
      options.onExit ? '1' : '0',
      options.watchFiles ? '1' : '0',
    ];
    const child = spawn(options.program, argv, { stdio: ['pipe', 'pipe', 'pipe', 'pipe'] });
    const supervisor = new SampleSupervisor(child, options);
    supervisor.follow();
    // Nothing arrives on this copy: the supervisor speaks only when the sandbox does, after `release`.
    return { supervisor, channel: child.stdio[3] as Readable };
  }

  /**
   * Lets the supervisor note what the machine holds before the sample runs (its files are not the
   * sample's) and wait for the sandbox. Call it before the sandbox is spawned, once the sample is placed.
   */
  begin(): void {
    (this.child.stdin as Writable).write('begin\n');
  }

  /** Closes this process's copy of the sandbox's end once the sandbox holds it (or will never). */
  static release(channel: Stream): void {
    (channel as Readable).destroy();
  }

  /** Stops the supervisor: after the sample, whose pending calls would otherwise fail. */
  async stop(): Promise<void> {
    const { child } = this;
    this.stopping = true;
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
    const timer = new AbortController();
    // Its last lines (the calls it counted past its records) are read before it counts as stopped.
    await Promise.race([this.ended, sleep(2000, undefined, { signal: timer.signal }).catch(() => undefined)]);
    timer.abort();
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  }

  get pid(): number | undefined {
    return this.child.pid;
  }

  private follow(): void {
    const { child, options } = this;
    let errors = '';
    child.stderr?.on('data', (chunk: Buffer) => {
      errors = (errors + chunk.toString()).slice(-2000);
    });
    child.on('exit', (code, signal) => {
      if (!this.stopping && (code !== 0 || signal !== null)) options.onProblem(`the supervisor stopped (${signal ?? `exit ${code}`}): ${errors.trim() || 'no message'}`);
    });
    child.on('error', (error) => options.onProblem(`the supervisor cannot run: ${error.message}`));
    (child.stdin as Writable).on('error', () => undefined);
    const lines = createInterface({ input: child.stdout as Readable, crlfDelay: Infinity });
    lines.on('line', (line) => void this.onLine(line));
    this.ended = once(lines, 'close').then(() => undefined);
  }

  private async onLine(line: string): Promise<void> {
    let event: SupervisorEvent;
    try {
      event = JSON.parse(line) as SupervisorEvent;
    } catch {
      return;
    }
    const { options } = this;
    switch (event.event) {
      case 'sleep':
        options.onSleep({ pid: event.pid, call: event.call, seconds: event.seconds, time: event.time });
        break;
      case 'unrecorded':
        options.onUnrecorded({ pid: event.pid, call: event.call, count: event.count });
        break;
      case 'capture':
        options.onCapture({
          reason: event.reason,
          pid: event.pid,
          filepath: event.path,
          hostPath: join(options.captureDir, event.file),
          size: event.size,
          kept: event.kept,
          sha256: event.sha256,
        });
        break;
      case 'missed':
        options.onProblem(`the ${event.reason} of ${event.path} by process ${event.pid} was not captured: ${event.error}`);
        break;
      case 'exit':
        await options.onExit?.(event.pid).catch(() => undefined);
        (this.child.stdin as Writable).write('done\n');
        break;
    }
  }
}
