import type { BehaviorEvent } from '../../report/events.js';
import { BpftraceOutputParser, type BpftraceOutput } from '../host/tracer/bpftrace-output.js';
import { EventDecoder } from '../host/tracer/event-decoder.js';
import { ReorderBuffer } from '../host/tracer/reorder-buffer.js';
import { straceArguments } from '../host/tracer/strace.js';
import { StraceParser } from '../host/tracer/strace-parser.js';
import type { TraceRecord } from '../host/tracer/trace-records.js';

/**
 * The guest's behaviour trace, as it arrives on the trace port, decoded by the host tracers' own
 * parsers into behaviour events. The stream starts with a header line saying what follows:
 *
 *     nestbox-trace ebpf <marker> <realtime minus monotonic, ns> <probes>    bpftrace's output (guest/tracer)
 *     nestbox-trace strace <reason>                                          strace's (the analyzer's fallback)
 *
 * Records are put back in time order (bpftrace reads one CPU buffer after another; strace prints a call
 * that waited late) before the decoder, which needs a fork before what the child did.
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
  private readonly decoder: EventDecoder;
  private readonly reorder: ReorderBuffer<TraceRecord>;
  private format: { line: (line: string) => void; end: () => void } | null = null;
  private newest = 0;
  /** Said once the first record gives the guest's clock: the task's clock may be years from the host's. */
  private pendingInfo: Omit<Extract<BehaviorEvent, { kind: 'tracer.info' }>, 'ts'> | null = null;
  private totalsFollow = false;
  /** The guest tracer said all it will (eBPF: its write totals are through). */
  private finishedSignal: () => void = () => undefined;
  readonly finished = new Promise<void>((resolve) => (this.finishedSignal = resolve));
  tracer: 'ebpf' | 'strace' | null = null;
  lost = 0;

  constructor(private readonly emit: (event: BehaviorEvent) => void) {
    this.decoder = new EventDecoder(emit, { cwdOf: () => SAMPLE_CWD });
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
    if (format === 'ebpf') this.beginEbpf(rest[0] ?? '', BigInt(rest[1] ?? '0'), Number(rest[2] ?? 0));
    else if (format === 'strace') this.beginStrace(rest.join(' '));
  }

  private beginEbpf(marker: string, offsetNs: bigint, probes: number): void {
    this.tracer = 'ebpf';
    const toEpoch = (ns: bigint) => Number(ns + offsetNs) / 1e9;
    const parser = new BpftraceOutputParser(marker, toEpoch, (output) => this.onBpftrace(output));
    this.info('ebpf', `bpftrace in the guest: ${probes} probes on ${GUEST_CGROUP}`);
    this.format = { line: (line) => parser.line(line), end: () => parser.end() };
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

  private onBpftrace(output: BpftraceOutput): void {
    switch (output.kind) {
      case 'record':
        // The write totals after the end marker are stamped with the host's clock: they are the trace's last word.
        this.push(this.totalsFollow ? { ...output.record, ts: this.newest } : output.record);
        return;
      case 'end':
        this.totalsFollow = true;
        return;
      case 'lost':
        this.lost += output.count;
        this.push({ ts: this.newest, tid: 0, op: 'lost', count: output.count });
        return;
      case 'ready':
        if (output.which === 5) this.finishedSignal();
        return;
      default:
        return;
    }
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
