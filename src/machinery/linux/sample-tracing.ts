import { copyFile, lstat } from 'node:fs/promises';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Logger } from 'pino';
import type { Tracer, TracerSession } from '../host/contracts.js';
import type { AnalysisLog } from './analysis-log.js';
import { GUEST_INIT_PATH } from './guest-init.js';
import { SAMPLE_DIR } from './machine-sandboxes.js';

const TRACER_START_MS = 30_000;
/** Where a tracer running inside the machine writes its log. */
const TRACE_LOG = '/run/nestbox-trace.log';

export interface SampleTracingOptions {
  tracer: Tracer | undefined;
  /** The sample leaf's cgroup v2 path: only what runs there is traced. */
  cgroupV2Path: string;
  eventsPath: string;
  log: Logger;
  analysisLog: AnalysisLog;
  warn(message: string): void;
}

/**
 * The tracing of one machine's sample: armed on the sample's cgroup once the sample's sandbox waits to
 * start, so that the sample is traced from its first instruction and nestbox's launch is not, and
 * stopped with the machine.
 */
export class SampleTracing {
  /** The tracer starting; null when there is none or it did not start. */
  private starting: Promise<TracerSession | null> = Promise.resolve(null);
  private session: TracerSession | undefined;
  private traceLog: { inMachine: string; host: string } | undefined;

  constructor(private readonly options: SampleTracingOptions) {}

  /** Starts the tracer on the sample's cgroup, where the sample's sandbox waits to start in `cwd`. */
  arm(cwd = SAMPLE_DIR): void {
    this.starting = this.start(cwd);
  }

  /** The sample's command line, under the tracer when the tracer must launch it itself. */
  async command(command: string[]): Promise<string[]> {
    const session = await this.starting;
    return session?.wrap ? this.insideMachine(session.wrap(command)) : command;
  }

  /** The tracer's own log inside the machine, if it writes one there: not a file the sample dropped. */
  get logInMachine(): string | undefined {
    return this.traceLog?.inMachine;
  }

  /** Waits for a tracer still starting, hands back its log and stops it; `upper` is the machine's upper layer. */
  async stop(upper: string): Promise<void> {
    await this.starting;
    const session = this.session;
    if (!session) return;
    this.session = undefined;
    await this.handBackTraceLog(upper);
    try {
      const { lost } = await session.stop();
      if (lost > 0) this.options.warn(`the tracer dropped ${lost} events`);
    } catch (error) {
      this.options.warn(`the tracer failed to stop cleanly: ${(error as Error).message}`);
    }
  }

  private async start(cwd: string): Promise<TracerSession | null> {
    const { tracer, cgroupV2Path, eventsPath, log } = this.options;
    if (!tracer) return null;
    // The machine's init starts the sample in `cwd`: only what it starts is recorded, never the launch.
    const starting = tracer.start({ cgroupV2Path, eventsPath, log, sample: { initPath: GUEST_INIT_PATH, cwd } });
    const timer = new AbortController();
    try {
      const late = sleep(TRACER_START_MS, 'late' as const, { signal: timer.signal });
      const started = await Promise.race([starting, late]);
      if (started === 'late') {
        // A tracer that comes up after all is stopped at once: nothing may keep running after the task.
        starting.then((session) => session.stop()).catch(() => undefined);
        throw new Error(`not ready after ${TRACER_START_MS / 1000} s`);
      }
      this.session = started;
      this.options.analysisLog.info(`tracing with ${started.name}`);
      return started;
    } catch (error) {
      this.options.warn(`the tracer did not start, no behaviour is recorded: ${(error as Error).message}`);
      return null;
    } finally {
      timer.abort();
    }
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

  private async handBackTraceLog(upper: string): Promise<void> {
    if (!this.traceLog) return;
    const inUpper = join(upper, this.traceLog.inMachine);
    // The sample may have put a link there: only a regular file is copied, never what a link points to.
    const isFile = await lstat(inUpper).then((stat) => stat.isFile(), () => false);
    if (!isFile) return this.options.warn('the tracer left no log in the machine');
    await copyFile(inUpper, this.traceLog.host).catch((error: Error) => this.options.warn(`cannot read the tracer's log: ${error.message}`));
  }
}
