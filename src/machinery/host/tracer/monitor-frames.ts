import { recordOfJson } from './monitor-output.js';
import type { TraceRecord } from './trace-records.js';

/** The frames' formats (native/monitor/monitor.c, `enum frame_format`). */
const FRAME_JSON = 0;
const FRAME_OPEN = 1;
const FRAME_DUP = 2;
const FRAME_CLOSES = 3;
const FRAME_GETDENTS = 4;

/** Every frame's header: format, name length, system call number, thread, seconds, nanoseconds. */
const HEADER = 16;
/** Each format's numbers after the header (closes: the count; its descriptors follow). */
const OPEN_NUMBERS = 24;
const DUP_NUMBERS = 12;
const CLOSES_COUNT = 4;
const GETDENTS_NUMBERS = 16;
const NEWLINE = 0x0a;

/**
 * Reads the monitor's records file (see native/monitor/monitor.c): frames of a binary header, then a
 * JSON record and a newline, or the numbers and bytes of the records a busy program makes most. Fed
 * the file's bytes as they come, in pieces that may cut a frame anywhere; each whole record is given
 * to `onRecord`, in the file's order.
 */
export class MonitorFrames {
  private rest: Buffer = Buffer.alloc(0);
  /** System calls' names by number: a few names, each decoded once. */
  private readonly names = new Map<number, string>();
  /** An unknown frame was met: what follows cannot be told apart, and is dropped. */
  private broken = false;

  constructor(
    private readonly onRecord: (record: TraceRecord) => void,
    /** Told what could not be read (never expected from the monitor that goes with this reader). */
    private readonly onUnreadable: (what: string) => void,
  ) {}

  push(chunk: Buffer): void {
    if (this.broken) return;
    const bytes = this.rest.length === 0 ? chunk : Buffer.concat([this.rest, chunk]);
    let at = 0;
    for (;;) {
      const size = this.frameAt(bytes, at);
      if (size === 0) break;
      at += size;
    }
    // What is left is the start of a frame still being written: copied, `chunk` is reused.
    this.rest = Buffer.from(bytes.subarray(at));
  }

  /** Bytes left that make no whole frame (a cut file). */
  get pending(): number {
    return this.rest.length;
  }

  /** Reads the frame at `at` if it is whole; returns its size, 0 when it is not (yet). */
  private frameAt(bytes: Buffer, at: number): number {
    if (bytes.length - at < HEADER) return 0;
    const format = bytes[at]!;
    const apiLength = bytes[at + 1]!;
    const tid = bytes.readUInt32LE(at + 4);
    const ts = bytes.readUInt32LE(at + 8) + bytes.readUInt32LE(at + 12) / 1e9;
    const body = at + HEADER;
    switch (format) {
      case FRAME_JSON: {
        const end = bytes.indexOf(NEWLINE, body);
        if (end < 0) return 0;
        this.json(bytes.toString('utf8', body, end), ts, tid);
        return end + 1 - at;
      }
      case FRAME_OPEN: {
        if (bytes.length - body < OPEN_NUMBERS) return 0;
        const api = body + OPEN_NUMBERS;
        const end = api + apiLength + bytes.readUInt32LE(body + 20);
        if (bytes.length < end) return 0;
        const record: TraceRecord = {
          ts,
          tid,
          api: this.name(bytes, at, api),
          op: 'open',
          dirfd: bytes.readInt32LE(body + 4),
          path: bytes.toString('utf8', api + apiLength, end),
          flags: bytes.readUInt32LE(body + 8),
          mode: bytes.readUInt32LE(body + 12),
          ret: bytes.readInt32LE(body + 16),
        };
        this.call(record, bytes.readUInt32LE(body));
        return end - at;
      }
      case FRAME_DUP:
        return this.fixedCall(bytes, at, DUP_NUMBERS, (api) => ({
          ts,
          tid,
          api,
          op: 'dup',
          oldfd: bytes.readInt32LE(body + 4),
          newfd: bytes.readInt32LE(body + 8),
        }));
      case FRAME_GETDENTS:
        return this.fixedCall(bytes, at, GETDENTS_NUMBERS, (api) => ({
          ts,
          tid,
          api,
          op: 'call',
          args: { fd: bytes.readInt32LE(body + 4), count: bytes.readUInt32LE(body + 8) },
          ret: bytes.readInt32LE(body + 12),
        }));
      case FRAME_CLOSES: {
        if (bytes.length - body < CLOSES_COUNT) return 0;
        const count = bytes.readUInt32LE(body);
        const end = body + CLOSES_COUNT + 4 * count;
        if (bytes.length < end) return 0;
        const fds: number[] = [];
        for (let fd = body + CLOSES_COUNT; fd < end; fd += 4) fds.push(bytes.readInt32LE(fd));
        this.onRecord({ ts, tid, op: 'closes', fds });
        return end - at;
      }
      default:
        this.onUnreadable(`a frame of unknown format ${format}: the rest of the records file is dropped`);
        this.broken = true;
        return bytes.length - at;
    }
  }

  private json(text: string, ts: number, tid: number): void {
    const record = recordOfJson(text);
    if (!record) return this.onUnreadable(`a record that is no JSON: ${text.slice(0, 200)}`);
    record.ts = ts;
    record.tid = tid;
    this.onRecord(record);
  }

  /** A call's frame of `numbers` after the header, then its name: `make` makes its record once it is whole. */
  private fixedCall(bytes: Buffer, at: number, numbers: number, make: (api: string) => TraceRecord): number {
    const name = at + HEADER + numbers;
    const end = name + bytes[at + 1]!;
    if (bytes.length < end) return 0;
    this.call(make(this.name(bytes, at, name)), bytes.readUInt32LE(at + HEADER));
    return end - at;
  }

  /** A binary call record, with `repeated` as a JSON record has it: only when calls were folded into it. */
  private call(record: TraceRecord, repeated: number): void {
    if (repeated) record.repeated = repeated;
    this.onRecord(record);
  }

  /** The name of the system call of the frame at `at`, whose bytes are at `name`: decoded once per call. */
  private name(bytes: Buffer, at: number, name: number): string {
    const nr = bytes.readUInt16LE(at + 2);
    let known = this.names.get(nr);
    if (known === undefined) {
      known = bytes.toString('latin1', name, name + bytes[at + 1]!);
      this.names.set(nr, known);
    }
    return known;
  }
}
