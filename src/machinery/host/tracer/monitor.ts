import type { Logger } from 'pino';
import type { TracerOptions, TracerSession } from '../contracts.js';
import { MonitorLoader, type MonitorOptions } from './monitor-loader.js';
import { RecordsDecoding } from './records-decoding.js';

/**
 * The ring buffer is one for all CPUs, in the order records were made; records made on different
 * CPUs at nearly the same time can still come a little out of order. (A descriptor copy the kernel
 * held back comes later than its time, but before anything that uses it, and makes no event itself.)
 */
const REORDER_WINDOW_SECONDS = 0.25;

export type { MonitorOptions } from './monitor-loader.js';

/**
 * nestbox's monitor as the eBPF tracer: one loaded monitor serves analysis after analysis. A session
 * records its sandbox's cgroup into that analysis's events file; its stop() has the monitor send
 * everything of the cgroup and forget it, and the next arm() starts from nothing. `discard()` ends it.
 */
export class MonitorProgram {
  private constructor(
    private readonly loader: MonitorLoader,
    private readonly decoding: RecordsDecoding,
  ) {}

  static async launch(log: Logger, options: MonitorOptions = {}): Promise<MonitorProgram> {
    return new MonitorProgram(await MonitorLoader.launch(log, options), RecordsDecoding.start(log));
  }

  /** Whether the monitor can be armed (again): it runs, and no session records. */
  get usable(): boolean {
    return this.loader.usable;
  }

  /** The monitor process's id, for measuring what it costs (bench/tracer.ts). */
  get pid(): number | undefined {
    return this.loader.pid;
  }

  /** Starts recording the cgroup's processes into the events file; one session at a time. */
  async arm(options: TracerOptions): Promise<TracerSession> {
    const recordsPath = await this.loader.arm(options.cgroupV2Path);
    try {
      await this.decoding.open({ recordsPath, eventsPath: options.eventsPath, sample: options.sample, windowSeconds: REORDER_WINDOW_SECONDS });
    } catch (error) {
      await this.loader.disarm().catch(() => undefined);
      await this.loader.forget(recordsPath);
      throw error;
    }
    this.decoding.info(nowEpoch(), 'nestbox monitor (eBPF) recording');
    let stopping: Promise<{ lost: number }> | null = null;
    const stop = async () => {
      try {
        const { lost } = await this.loader.disarm();
        await this.decoding.close(nowEpoch());
        return { lost };
      } catch (error) {
        const message = `the monitor did not stop cleanly: ${(error as Error).message}`;
        options.log.error({ err: error, cgroup: options.cgroupV2Path }, message);
        await this.decoding.close(nowEpoch(), message).catch(() => undefined);
        return { lost: 0 };
      } finally {
        await this.loader.forget(recordsPath);
      }
    };
    return {
      name: 'ebpf',
      stop: () => (stopping ??= stop()),
    };
  }

  /** Ends the monitor (waiting or after its last session). */
  async discard(): Promise<void> {
    await this.loader.discard();
    await this.decoding.terminate();
  }
}

function nowEpoch(): number {
  return Date.now() / 1000;
}
