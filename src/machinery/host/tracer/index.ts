import { spawn } from 'node:child_process';
import type { Logger } from 'pino';
import type { Tracer, TracerOptions, TracerSession } from '../contracts.js';
import { BpftraceProgram } from './bpftrace.js';
import { startStrace } from './strace.js';
import { ensureTracefs } from './tracefs.js';

export { BpftraceProgram } from './bpftrace.js';

/** A program whose output file (it only grows, on the host's disk) passed this size is replaced while idle. */
const MAX_PROGRAM_OUTPUT_BYTES = 512 * 2 ** 20;
export { startStrace, straceCommand } from './strace.js';

export interface TracerChoice {
  /** 'strace' forces the fallback (tests, hosts where eBPF misbehaves); default: eBPF when it works. */
  prefer?: 'ebpf' | 'strace';
  /**
   * After each analysis, keep the eBPF program (compiled and attached, waiting) for the next one, or
   * prepare a new one if it cannot serve again, so start() takes milliseconds instead of seconds.
   * Default true; false ends the program with its analysis.
   */
  keepWarm?: boolean;
}

export interface BehaviourTracer extends Tracer {
  /** Which tracer start() will use: decided once, by a short eBPF probe. */
  kind(): Promise<'ebpf' | 'strace'>;
  /**
   * Prepares an eBPF program in the background; call it when the service starts. Resolves when it is
   * ready (or could not be made: start() then tries again, and falls back to strace).
   */
  prepare(): Promise<void>;
  /** Ends the waiting eBPF program, if any. */
  close(): Promise<void>;
}

/** Picks eBPF (bpftrace on tracepoints, invisible to the sample) when it works here, strace otherwise. */
export function createTracer(log: Logger, choice: TracerChoice = {}): BehaviourTracer {
  return new AutoTracer(log.child({ component: 'tracer' }), choice);
}

class AutoTracer implements BehaviourTracer {
  private ebpf: Promise<boolean> | null = null;
  private spare: Promise<BpftraceProgram> | null = null;
  private closed = false;

  constructor(
    private readonly log: Logger,
    private readonly choice: TracerChoice,
  ) {}

  async kind(): Promise<'ebpf' | 'strace'> {
    return (await this.ebpfWorks()) ? 'ebpf' : 'strace';
  }

  async prepare(): Promise<void> {
    if (this.closed || this.choice.prefer === 'strace') return;
    this.spare ??= this.ebpfWorks().then((works) => {
      if (!works) throw new Error('eBPF tracing is not available');
      return BpftraceProgram.launch(this.log);
    });
    await this.spare.then(
      () => undefined,
      (error: unknown) => this.log.warn({ err: error }, 'could not prepare an eBPF tracer'),
    );
  }

  async start(options: TracerOptions): Promise<TracerSession> {
    if (this.choice.prefer === 'strace') return startStrace(options, options.log, 'strace was chosen');
    if (!(await this.ebpfWorks())) return startStrace(options, options.log, 'eBPF tracing does not work on this host');
    try {
      const program = await this.takeProgram();
      const session = await program.arm(options);
      return this.keepingWarm(program, session);
    } catch (error) {
      options.log.error({ err: error }, 'eBPF tracer failed to start; using strace');
      return startStrace(options, options.log, `eBPF tracer failed to start: ${(error as Error).message}`);
    }
  }

  async close(): Promise<void> {
    this.closed = true;
    const spare = this.spare;
    this.spare = null;
    if (spare) await spare.then((program) => program.discard(), () => undefined);
  }

  private async takeProgram(): Promise<BpftraceProgram> {
    const spare = this.spare;
    this.spare = null;
    if (spare) {
      try {
        return await spare;
      } catch {
        // Launched again below, so that the error, if it is still there, is this start's.
      }
    }
    return BpftraceProgram.launch(this.log);
  }

  /**
   * Once an analysis's tracing ends, its program (which has forgotten that sandbox) waits for the next
   * one; a program that cannot serve again is ended and a new one prepared while the machine is idle.
   */
  private keepingWarm(program: BpftraceProgram, session: TracerSession): TracerSession {
    return {
      name: session.name,
      stop: async () => {
        const result = await session.stop();
        const keep = this.choice.keepWarm !== false && !this.closed;
        if (keep && !this.spare && program.usable && program.outputBytes < MAX_PROGRAM_OUTPUT_BYTES) {
          this.spare = Promise.resolve(program);
          return result;
        }
        await program.discard();
        if (keep) void this.prepare();
        return result;
      },
    };
  }

  private ebpfWorks(): Promise<boolean> {
    this.ebpf ??= probeEbpf(this.log);
    return this.ebpf;
  }
}

/**
 * A tracepoint program that answers our own kill(self, 0): bpftrace runs, tracefs is there, the
 * kernel loads and attaches BPF programs and delivers their output.
 */
async function probeEbpf(log: Logger): Promise<boolean> {
  try {
    await ensureTracefs();
  } catch (error) {
    log.warn({ err: error }, 'tracefs is not mounted and cannot be: no eBPF tracing');
    return false;
  }
  const me = process.pid;
  const script = `tracepoint:syscalls:sys_enter_kill /pid == ${me} && args->sig == 0/ { printf("nestbox-ok\\n"); exit(); }`;
  return new Promise((resolve) => {
    let output = '';
    let settled = false;
    const child = spawn('bpftrace', ['-e', script], { stdio: ['ignore', 'pipe', 'pipe'] });
    const finish = (works: boolean, why?: string) => {
      if (settled) return;
      settled = true;
      clearInterval(poke);
      clearTimeout(timer);
      child.kill('SIGKILL');
      if (!works) log.warn({ why }, 'eBPF tracing does not work here; strace will be used');
      resolve(works);
    };
    child.stdout.on('data', (chunk: Buffer) => {
      output += chunk.toString();
      if (output.includes('nestbox-ok')) finish(true);
    });
    child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.on('error', (error) => finish(false, error.message));
    child.on('close', () => finish(output.includes('nestbox-ok'), output.slice(-500)));
    const poke = setInterval(() => process.kill(me, 0), 50);
    const timer = setTimeout(() => finish(false, 'no answer in time'), 60_000);
  });
}
