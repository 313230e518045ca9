import type { BehaviorEvent } from '../../report/events.js';
import { parseMonitorLine } from '../host/tracer/monitor-output.js';
import { sampleDecoder, type RecordsDecoder } from '../host/tracer/sample-scope.js';
import { ReorderBuffer } from '../host/tracer/reorder-buffer.js';
import { straceArguments } from '../host/tracer/strace.js';
import { StraceParser } from '../host/tracer/strace-parser.js';
import type { TraceRecord } from '../host/tracer/trace-records.js';
import { GUEST_LAUNCHER } from './guest-supervisor.js';

/**
 * The guest's behaviour trace, as it arrives on the trace port, decoded by the host tracers' own
 * parsers into behaviour events. The stream starts with a header line saying what follows:
 *
 *     nestbox-trace monitor           nestbox's monitor's records (guest/tracer), then {"ctl":"end"}
 *     nestbox-trace strace <reason>   strace's (the analyzer's fallback, where the image has strace)
 *
 * Records are put back in time order (the monitor holds a descriptor copy back until it is used; strace
 * prints a call that waited late) before the decoder, which needs a fork before what the child did.
 */
const HEADER = 'nestbox-trace ';
/** The analyzer runs the sample in /tmp: the first process's directory, for its relative paths. */
const SAMPLE_CWD = '/tmp';
const REORDER_WINDOW_SECONDS = 2;
/** The sample's cgroup in the guest (guest/tracer/tracer.py), named in the tracer.info event. */
const GUEST_CGROUP = '/sys/fs/cgroup/nestbox-sample';

/** The options of the guest's strace fallback (the analyzer adds `-o <port> -- <command>`). */
export function straceOptions(): string[] {
  return straceArguments(true);
}

export class GuestTraceDecoder {
  private readonly decoder: RecordsDecoder;
  private readonly reorder: ReorderBuffer<TraceRecord>;
  private format: { line: (line: string) => void; end: () => void } | null = null;
  private newest = 0;
  /** Said once the first record gives the guest's clock: the task's clock may be years from the host's. */
  private pendingInfo: Omit<Extract<BehaviorEvent, { kind: 'tracer.info' }>, 'ts'> | null = null;
  /** The guest tracer said all it will (the monitor: its session's last records are through). */
  private finishedSignal: () => void = () => undefined;
  readonly finished = new Promise<void>((resolve) => (this.finishedSignal = resolve));
  tracer: 'ebpf' | 'strace' | null = null;
  lost = 0;

  constructor(private readonly emit: (event: BehaviorEvent) => void) {
    // The analyzer starts the sample itself (its first exec in the sample cgroup, or the exec that follows
    // the supervisor's hand-off): what runs there before that exec is the analyzer's own, and is left out.
    this.decoder = sampleDecoder(emit, { initPath: '', cwd: SAMPLE_CWD }, { belowInit: true, cwdOf: () => SAMPLE_CWD, launcherPath: GUEST_LAUNCHER });
    this.reorder = new ReorderBuffer<TraceRecord>(REORDER_WINDOW_SECONDS, (record) => this.decoder.record(record));
  }

  /** One line of the stream, without its newline, one char per byte. */
  line(line: string): void {
    if (this.format) this.format.line(line);
    else if (line.startsWith(HEADER)) this.begin(line.slice(HEADER.length).split(' '));
  }

  /** Hands on the records that can no longer be overtaken. */
  releaseSettled(): void {
    this.reorder.releaseSettled();
  }

  /** The stream has ended: everything still held is decoded. */
  end(now = Date.now() / 1000): void {
    this.format?.end();
    this.sayInfo(this.newest || now);
    this.reorder.releaseAll();
    this.decoder.finish(this.newest || now);
  }

  private begin([format = '', ...rest]: string[]): void {
    if (format === 'monitor') this.beginMonitor();
    else if (format === 'strace') this.beginStrace(rest.join(' '));
  }

  private beginMonitor(): void {
    this.tracer = 'ebpf';
    this.info('ebpf', `nestbox's monitor in the guest, on ${GUEST_CGROUP}`);
    this.format = { line: (line) => this.onMonitorLine(line), end: () => undefined };
  }

  /** The stream is read one char per byte: the monitor's JSON is UTF-8. */
  private onMonitorLine(line: string): void {
    const parsed = parseMonitorLine(Buffer.from(line, 'latin1').toString('utf8'));
    if (!parsed) return;
    if ('ctl' in parsed) {
      if ((parsed as { ctl: string }).ctl === 'end') this.finishedSignal();
      return;
    }
    if (parsed.op === 'lost') this.lost += parsed.count;
    this.push(parsed);
  }

  private beginStrace(reason: string): void {
    this.tracer = 'strace';
    const parser = new StraceParser((record) => this.push(record));
    this.info('strace', `strace --seccomp-bpf in the guest (the sample can detect it): ${reason}`);
    const end = () => {
      parser.finish(this.newest || Date.now() / 1000);
      this.finishedSignal();
    };
    this.format = { line: (line) => parser.line(line), end };
  }

  private push(record: TraceRecord): void {
    if (record.ts > this.newest) this.newest = record.ts;
    this.sayInfo(record.ts);
    this.reorder.push(record);
  }

  private info(tracer: 'ebpf' | 'strace', message: string): void {
    this.pendingInfo = { pid: 0, ppid: 0, tid: 0, comm: '', kind: 'tracer.info', tracer, message };
  }

  private sayInfo(ts: number): void {
    if (!this.pendingInfo) return;
    this.emit({ ...this.pendingInfo, ts });
    this.pendingInfo = null;
  }
}
