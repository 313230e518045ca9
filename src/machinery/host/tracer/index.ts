import type { Logger } from 'pino';
import type { Tracer, TracerOptions, TracerSession } from '../contracts.js';
import { MonitorProgram } from './monitor.js';
import { startStrace } from './strace.js';

/** The bpftrace program the monitor replaced: kept for bench/tracer.ts to compare with. */
export { BpftraceProgram } from './bpftrace.js';
export { MonitorProgram } from './monitor.js';
export { MonitorLoader } from './monitor-loader.js';
export { ensureMonitor } from './monitor-build.js';
export { startStrace, straceCommand } from './strace.js';

export interface TracerChoice {
  /** 'strace' forces the fallback (tests, hosts where eBPF misbehaves); default: eBPF when it works. */
  prefer?: 'ebpf' | 'strace';
  /**
   * After each analysis, keep the monitor (loaded and attached, waiting) for the next one, or prepare a
   * new one if it cannot serve again, so that start() only arms it. Default true; false ends the monitor
   * with its analysis.
   */
  keepWarm?: boolean;
}

export interface BehaviourTracer extends Tracer {
  /** Which tracer start() will use: decided once, by loading the monitor. */
  kind(): Promise<'ebpf' | 'strace'>;
  /**
   * Prepares a monitor in the background; call it when the service starts. Resolves when it is ready
   * (or could not be made: start() then tries again, and falls back to strace).
   */
  prepare(): Promise<void>;
  /** Ends the waiting monitor, if any. */
  close(): Promise<void>;
}

/** Picks eBPF (nestbox's monitor on tracepoints, invisible to the sample) when it works here, strace otherwise. */
export function createTracer(log: Logger, choice: TracerChoice = {}): BehaviourTracer {
  return new AutoTracer(log.child({ component: 'tracer' }), choice);
}

class AutoTracer implements BehaviourTracer {
  private ebpf: Promise<boolean> | null = null;
  private spare: Promise<MonitorProgram> | null = null;
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
    // The monitor that showed eBPF works waits as the spare: another is launched only when it was taken.
    if (!(await this.ebpfWorks()) || this.closed) return;
    this.spare ??= MonitorProgram.launch(this.log);
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

  private async takeProgram(): Promise<MonitorProgram> {
    const spare = this.spare;
    this.spare = null;
    if (spare) {
      try {
        return await spare;
      } catch {
        // Launched again below, so that the error, if it is still there, is this start's.
      }
    }
    return MonitorProgram.launch(this.log);
  }

  /**
   * Once an analysis's tracing ends, its monitor (which has forgotten that sandbox) waits for the next
   * one; a program that cannot serve again is ended and a new one prepared while the machine is idle.
   */
  private keepingWarm(program: MonitorProgram, session: TracerSession): TracerSession {
    return {
      name: session.name,
      stop: async () => {
        const result = await session.stop();
        const keep = this.choice.keepWarm !== false && !this.closed;
        if (keep && !this.spare && program.usable) {
          this.spare = Promise.resolve(program);
          return result;
        }
        await program.discard();
        if (keep) void this.prepare();
        return result;
      },
    };
  }

  /** Whether the monitor loads here: the first one launched waits as the spare. */
  private ebpfWorks(): Promise<boolean> {
    this.ebpf ??= MonitorProgram.launch(this.log).then(
      async (program) => {
        if (this.closed || this.spare) await program.discard();
        else this.spare = Promise.resolve(program);
        return true;
      },
      (error: unknown) => {
        this.log.warn({ err: error }, 'the eBPF monitor does not work here; strace will be used');
        return false;
      },
    );
    return this.ebpf;
  }
}
