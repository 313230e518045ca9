import { readlinkSync } from 'node:fs';
import type { BehaviorEvent } from '../../../report/events.js';
import type { TracerOptions } from '../contracts.js';
import { EventsWriter } from './events-writer.js';
import { ReorderBuffer } from './reorder-buffer.js';
import { sampleDecoder, type RecordsDecoder } from './sample-scope.js';
import type { TraceRecord } from './trace-records.js';

/** How often held records are released and the file written. */
const FLUSH_INTERVAL_MS = 200;

/**
 * Where the records of an eBPF session go: put back in time order (records of different CPUs can
 * arrive out of order, see reorder-buffer.ts), decoded into behaviour events and written to the events
 * file as they settle.
 */
export class RecordPipeline {
  private readonly timer: NodeJS.Timeout;

  private constructor(
    private readonly writer: EventsWriter,
    private readonly decoder: RecordsDecoder,
    private readonly reorder: ReorderBuffer<TraceRecord>,
  ) {
    this.timer = setInterval(() => {
      reorder.releaseSettled();
      writer.flush();
    }, FLUSH_INTERVAL_MS);
  }

  /** Into the session's events file; `windowSeconds`: how far apart in time records can arrive. */
  static async open(options: Pick<TracerOptions, 'eventsPath' | 'sample'>, windowSeconds: number): Promise<RecordPipeline> {
    const writer = await EventsWriter.open(options.eventsPath);
    // The tracer sees the machine from before its init runs: only the sample's records become events.
    const sandboxed = options.sample !== undefined;
    const decoder = sampleDecoder((event) => writer.write(event), options.sample, { belowInit: false, cwdOf: (pid) => machineCwd(pid, sandboxed) });
    const reorder = new ReorderBuffer<TraceRecord>(windowSeconds, (record) => decoder.record(record));
    return new RecordPipeline(writer, decoder, reorder);
  }

  push(record: TraceRecord): void {
    this.reorder.push(record);
  }

  /** A note from the tracer itself, written at once. */
  info(ts: number, message: string): void {
    this.writer.write(info(ts, message));
  }

  /** Decodes what is held, reports the writes still open at `now`, and completes the file. */
  async close(now: number, message?: string): Promise<void> {
    clearInterval(this.timer);
    this.reorder.releaseAll();
    this.decoder.finish(now);
    if (message) this.info(now, message);
    await this.writer.close();
  }
}

function info(ts: number, message: string): BehaviorEvent {
  return { ts, pid: 0, ppid: 0, tid: 0, comm: '', kind: 'tracer.info', tracer: 'ebpf', message };
}

/**
 * A process's current directory as it sees it: relative to its own root (the sandbox's), not the host's.
 * `sandboxed`: the process runs in a sandbox, so a process whose root is the host's is another one that
 * took the pid since (it is read after the reorder window), whose directory is a host path.
 */
function machineCwd(pid: number, sandboxed: boolean): string | null {
  try {
    const cwd = readlinkSync(`/proc/${pid}/cwd`);
    const root = readlinkSync(`/proc/${pid}/root`);
    if (root === '/') return sandboxed ? null : cwd;
    if (cwd === root) return '/';
    return cwd.startsWith(`${root}/`) ? cwd.slice(root.length) : null;
  } catch {
    return null;
  }
}
