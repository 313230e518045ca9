import { createWriteStream, type WriteStream } from 'node:fs';
import { once } from 'node:events';
import { connect, type Socket } from 'node:net';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { EVENTS_FILE } from '../../report/events.js';
import type { AnalysisPaths } from '../../storage/layout.js';
import { EventsWriter } from '../host/tracer/events-writer.js';
import type { DroppedFileLimits } from '../dropped/budget.js';
import { AnalysisUploads, type UploadLimits } from './analysis-uploads.js';
import type { GuestMachine } from './guest-machine.js';
import { GuestTraceDecoder } from './guest-trace.js';
import { withTimeout } from './timeouts.js';
import { UploadStream } from './upload-stream.js';

/**
 * The host end of the guest's three result ports, read while the sample runs:
 *   trace  the behaviour trace (bpftrace's output, or strace's: see guest-trace.ts), kept raw in
 *          logs/trace.log and decoded into logs/events.jsonl
 *   log    the analyzer's and the sample's output: analysis.log (capped)
 *   files  dropped files and process dumps (upload-stream.ts)
 * What arrived is on the host already, whatever the sample does to the guest afterwards.
 */
export interface ResultChannelOptions {
  logLimitBytes: number;
  /** The raw trace (and so the behaviour log) stops growing past this: a guest could flood it. */
  traceLimitBytes: number;
  /** Process dumps. */
  uploads: UploadLimits;
  droppedFiles: DroppedFileLimits;
}

export interface ChannelSummary {
  events: number;
  uploads: AnalysisUploads;
  warnings: string[];
}

const QUIET_MS = 150;
/** The tracers print strings of at most 512 bytes: a longer line is the guest's doing, not theirs. */
const MAX_LINE_CHARS = 1 << 20;

export class ResultChannels {
  private lastData = Date.now();
  private logBytes = 0;
  private logTruncated = false;
  private traceBytes = 0;
  private readonly warnings: string[] = [];
  private pendingLine = '';

  private constructor(
    private readonly sockets: Socket[],
    private readonly events: EventsWriter,
    private readonly trace: GuestTraceDecoder,
    private readonly rawTrace: WriteStream,
    private readonly analysisLog: WriteStream,
    readonly uploads: AnalysisUploads,
    private readonly options: ResultChannelOptions,
  ) {}

  static async open(machine: GuestMachine, paths: AnalysisPaths, options: ResultChannelOptions): Promise<ResultChannels> {
    const events = await EventsWriter.open(join(paths.dir, EVENTS_FILE));
    const trace = new GuestTraceDecoder((event) => events.write(event));
    const rawTrace = createWriteStream(join(paths.logs, 'trace.log'));
    const analysisLog = createWriteStream(paths.analysisLog, { flags: 'a' });
    const uploads = new AnalysisUploads(paths, options.uploads, options.droppedFiles);
    const sockets = await Promise.all(
      (['trace', 'log', 'files'] as const).map((channel) => connectSocket(machine.channelSocket(channel)!)),
    );
    const channels = new ResultChannels(sockets, events, trace, rawTrace, analysisLog, uploads, options);
    channels.wire(sockets[0]!, sockets[1]!, sockets[2]!);
    return channels;
  }

  private wire(trace: Socket, log: Socket, files: Socket): void {
    const uploadStream = new UploadStream(this.uploads);
    trace.on('data', (chunk: Buffer) => {
      // Backpressure: while the disk catches up QEMU holds the guest's writes, which blocks the writers.
      if (!this.onTrace(chunk)) {
        trace.pause();
        this.rawTrace.once('drain', () => trace.resume());
      }
    });
    log.on('data', (chunk: Buffer) => this.onLog(chunk));
    files.on('data', (chunk: Buffer) => {
      this.lastData = Date.now();
      uploadStream.push(chunk);
    });
    for (const socket of this.sockets) socket.on('error', () => undefined);
  }

  /** Returns false when the raw trace's write buffer is full. */
  private onTrace(chunk: Buffer): boolean {
    this.lastData = Date.now();
    if (this.traceBytes >= this.options.traceLimitBytes) return true;
    this.traceBytes += chunk.length;
    if (this.traceBytes >= this.options.traceLimitBytes) {
      this.warnings.push(`the behaviour trace passed ${this.options.traceLimitBytes} bytes: the rest is not recorded`);
    }
    const lines = (this.pendingLine + chunk.toString('latin1')).split('\n');
    this.pendingLine = lines.pop() ?? '';
    if (this.pendingLine.length > MAX_LINE_CHARS) this.pendingLine = '';
    // One char per byte: the parsers decode strings as UTF-8 themselves.
    for (const line of lines) this.trace.line(line);
    this.trace.releaseSettled();
    return this.rawTrace.write(chunk);
  }

  private onLog(chunk: Buffer): void {
    this.lastData = Date.now();
    const room = this.options.logLimitBytes - this.logBytes;
    if (room <= 0) {
      if (!this.logTruncated) this.analysisLog.write('\n[nestbox: analysis log truncated]\n');
      this.logTruncated = true;
      return;
    }
    const part = chunk.subarray(0, room);
    this.logBytes += part.length;
    this.analysisLog.write(part);
  }

  /**
   * Waits (at most `timeoutMs`) for the ports to fall quiet and, when the analyzer reported its end,
   * for its last upload and the end of the eBPF trace to arrive.
   */
  async drain(timeoutMs: number, analyzerFinished: boolean): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    if (analyzerFinished) await withTimeout(this.uploads.done, timeoutMs);
    if (analyzerFinished && this.trace.tracer === 'ebpf') await withTimeout(this.trace.finished, Math.max(0, deadline - Date.now()));
    while (Date.now() - this.lastData < QUIET_MS && Date.now() < deadline) await sleep(QUIET_MS / 3);
  }

  async close(): Promise<ChannelSummary> {
    for (const socket of this.sockets) socket.destroy();
    if (this.pendingLine) this.trace.line(this.pendingLine);
    this.pendingLine = '';
    this.trace.end();
    this.uploads.abandon();
    await Promise.all([this.events.close(), endStream(this.rawTrace), endStream(this.analysisLog)]);
    return { events: this.events.count, uploads: this.uploads, warnings: [...this.warnings, ...this.uploads.warnings] };
  }
}

async function endStream(stream: WriteStream): Promise<void> {
  if (stream.closed) return;
  stream.end();
  await once(stream, 'close');
}

function connectSocket(path: string): Promise<Socket> {
  return new Promise((resolve, reject) => {
    const socket = connect(path);
    socket.once('connect', () => resolve(socket));
    socket.once('error', reject);
  });
}
