import { CONTINUATION, SETID_ARGS, STRING_LIMIT } from './bpftrace-script.js';
import { decodeSockaddr } from './sockaddr.js';
import { SETID_CALLS, type TraceOp, type TraceRecord } from './trace-records.js';

/**
 * Reads what the program of `bpftrace-script.ts` prints (bpftrace's text output) and turns it into
 * trace records, joining records with the string parts that belong to them.
 *
 * Text output costs bpftrace several times less than its JSON output, but strings are printed raw: a
 * path may contain a newline. Every record therefore starts with the program's random marker, and a
 * line without it continues the tail string of the record before it (a sample cannot forge records
 * without knowing the marker). Records without a tail are complete at once, others when the next line
 * shows that they do not go on.
 */
export type BpftraceOutput =
  | { kind: 'attached'; probes: number }
  /** A readiness probe answered (1: first attached, 2: last attached), the program was armed (3), a drain marker (4), the totals are out (5). */
  | { kind: 'ready'; which: number; value: bigint }
  | { kind: 'lost'; count: number }
  /** The END probe ran: what follows is bpftrace's map printout. */
  | { kind: 'end' }
  | { kind: 'record'; record: TraceRecord };

interface RawRecord {
  letter: string;
  ns: bigint;
  tid: number;
  parts: number;
  fields: string[];
  /** The tail's bytes, one char per byte (latin1). */
  tail: string;
}

interface Pending {
  main?: RawRecord;
  parts: Map<number, string>;
}

/** `argc`: how many argv parts (indexes below CONTINUATION) arrived. */
type Builder = (r: RawRecord, part: (index: number) => string, argc: number) => TraceOp | null;

interface Spec {
  /** Whether the record ends with a string (which may contain newlines). */
  tail: boolean;
  fields: number;
  build: Builder;
}

/** A record whose tail may still go on in the next line. */
interface Open {
  letter: string;
  head: string[];
  tail: string;
}

const LOST = /^Lost (\d+) events$/;
const ATTACHING = /^Attaching (\d+) probes?\.\.\.$/;
const WRITE_TOTAL = /^@wb\[(\d+), (-?\d+)\]: (\d+)$/;

export class BpftraceOutputParser {
  private readonly pending = new Map<string, Pending>();
  private readonly prefix: string;
  private open: Open | null = null;
  private ended = false;

  constructor(
    marker: string,
    private readonly toEpoch: (ns: bigint) => number,
    private readonly emit: (output: BpftraceOutput) => void,
  ) {
    this.prefix = `${marker} `;
  }

  /** One line of output without its newline, one char per byte. */
  line(line: string): void {
    if (line.startsWith(this.prefix)) {
      this.close();
      this.begin(line.slice(this.prefix.length));
      return;
    }
    if (this.ended) {
      this.writeTotal(line);
      return;
    }
    const lost = LOST.exec(line);
    if (lost) {
      this.emit({ kind: 'lost', count: Number(lost[1]) });
      return;
    }
    if (this.open) {
      this.open.tail += `\n${line}`;
      return;
    }
    const attaching = ATTACHING.exec(line);
    if (attaching) this.emit({ kind: 'attached', probes: Number(attaching[1]) });
  }

  /** The output has ended: records still waiting for parts are given with what arrived. */
  end(): void {
    this.close();
    for (const [key, entry] of this.pending) {
      this.pending.delete(key);
      if (entry.main) this.complete(entry.main, entry.parts);
    }
  }

  private begin(text: string): void {
    const space = text.indexOf(' ');
    const letter = space < 0 ? text : text.slice(0, space);
    if (letter === 'e') {
      this.ended = true;
      this.emit({ kind: 'end' });
      return;
    }
    const spec = SPECS[letter];
    const count = letter === 's' ? 4 : letter === 'r' ? 6 : spec ? 4 + spec.fields : 0;
    const split = splitFields(text, count);
    if (!split) return;
    if (letter === 's' || spec?.tail) this.open = { letter, head: split.fields, tail: split.rest };
    else this.finish(letter, split.fields, '');
  }

  private close(): void {
    const open = this.open;
    if (!open) return;
    this.open = null;
    this.finish(open.letter, open.head, open.tail);
  }

  private finish(letter: string, head: string[], tail: string): void {
    const [, nsText = '0', tidText = '0', partsText = '0', ...fields] = head;
    if (letter === 'r') {
      // The totals are printed (5): what follows is records again (a program armed for the next sandbox).
      if (fields[0] === '5') this.ended = false;
      this.emit({ kind: 'ready', which: Number(fields[0]), value: BigInt(fields[1] ?? 0) });
      return;
    }
    const tid = Number(tidText);
    const key = `${tid}:${nsText}`;
    if (letter === 's') {
      const entry = this.entry(key);
      entry.parts.set(Number(partsText), tail);
      this.tryComplete(key, entry);
      return;
    }
    if (!SPECS[letter]) return;
    const raw: RawRecord = { letter, ns: BigInt(nsText), tid, parts: Number(partsText), fields, tail };
    if (raw.parts === 0 && !this.pending.has(key)) {
      this.complete(raw, new Map());
      return;
    }
    const entry = this.entry(key);
    entry.main = raw;
    this.tryComplete(key, entry);
  }

  private entry(key: string): Pending {
    let entry = this.pending.get(key);
    if (!entry) {
      entry = { parts: new Map() };
      this.pending.set(key, entry);
    }
    return entry;
  }

  private tryComplete(key: string, entry: Pending): void {
    if (!entry.main || entry.parts.size < entry.main.parts) return;
    this.pending.delete(key);
    this.complete(entry.main, entry.parts);
  }

  private complete(raw: RawRecord, parts: Map<number, string>): void {
    const part = (index: number) => utf8(withContinuation(parts.get(index) ?? '', parts.get(index + CONTINUATION)));
    raw.tail = withContinuation(raw.tail, parts.get(CONTINUATION));
    const argc = [...parts.keys()].filter((index) => index < CONTINUATION).length;
    const op = SPECS[raw.letter]!.build(raw, part, argc);
    if (!op) return;
    // A rename of another thread (a write to /proc/<pid>/comm) belongs to the renamed thread.
    const tid = op.op === 'rename_task' && Number(raw.fields[0]) > 0 ? Number(raw.fields[0]) : raw.tid;
    this.emit({ kind: 'record', record: { ts: this.toEpoch(raw.ns), tid, ...op } });
  }

  /** The END probe's per-(pid, fd) write totals that no close reported: `@wb[pid, fd]: bytes`. */
  private writeTotal(line: string): void {
    const total = WRITE_TOTAL.exec(line);
    if (!total) return;
    const pid = Number(total[1]);
    const bytes = Number(total[3]);
    if (bytes <= 0) return;
    const ts = this.toEpoch(process.hrtime.bigint());
    this.emit({ kind: 'record', record: { ts, tid: pid, op: 'write', pid, fd: Number(total[2]) | 0, bytes, final: true } });
  }
}

/** A string cut at `str()`'s limit goes on in its continuation part; shorter ones had no continuation. */
function withContinuation(text: string, continuation: string | undefined): string {
  return continuation !== undefined && text.length === STRING_LIMIT ? text + continuation : text;
}

function splitFields(text: string, count: number): { fields: string[]; rest: string } | null {
  const fields: string[] = [];
  let at = 0;
  for (let i = 0; i < count; i++) {
    const space = text.indexOf(' ', at);
    if (space < 0) {
      if (i === count - 1) {
        fields.push(text.slice(at));
        return { fields, rest: '' };
      }
      return null;
    }
    fields.push(text.slice(at, space));
    at = space + 1;
  }
  return { fields, rest: text.slice(at) };
}

function utf8(bytes: string): string {
  return Buffer.from(bytes, 'latin1').toString('utf8');
}

const int = (text: string | undefined) => Number(text ?? 0);
/** Descriptors and ids printed from unsigned kernel types: -1 comes out as 4294967295. */
const int32 = (text: string | undefined) => Number(text ?? 0) | 0;

/** A wait status (as in `task_struct.exit_code`): the exit code, or minus the signal that killed it. */
export function exitCodeOf(status: number): number {
  const signal = status & 0x7f;
  return signal === 0 ? (status >> 8) & 0xff : -signal;
}

function argvOf(count: number, part: (index: number) => string): string[] {
  return Array.from({ length: count }, (_, i) => part(i));
}

const MODULE_CALLS = ['init_module', 'finit_module', 'delete_module'];

function addressOf(r: RawRecord): ReturnType<typeof decodeSockaddr> {
  const words = r.fields.slice(3, 7).map((w) => BigInt(`0x${w || '0'}`));
  if (words.every((w) => w === 0n)) return null;
  const bytes = Buffer.alloc(32);
  words.forEach((w, i) => bytes.writeBigUInt64LE(w, i * 8));
  return decodeSockaddr(bytes, utf8(r.tail));
}

const SPECS: Record<string, Spec> = {
  h: { tail: true, fields: 2, build: (r) => ({ op: 'identity', pid: int(r.fields[0]), ppid: int(r.fields[1]), comm: utf8(r.tail) }) },
  F: { tail: false, fields: 1, build: (r) => ({ op: 'fork', child: int(r.fields[0]) }) },
  X: {
    tail: true,
    fields: 1,
    build: (r, part, argc) => ({ op: 'exec', path: utf8(r.tail), dirfd: -100, argv: argvOf(argc, part), ret: 0 }),
  },
  E: {
    tail: true,
    fields: 2,
    build: (r, part, argc) => ({
      op: 'exec',
      path: utf8(r.tail),
      dirfd: int32(r.fields[1]),
      argv: argvOf(argc, part),
      ret: int(r.fields[0]),
    }),
  },
  Q: { tail: false, fields: 1, build: (r) => ({ op: 'exit', code: exitCodeOf(int(r.fields[0])) }) },
  N: { tail: true, fields: 1, build: (r) => ({ op: 'rename_task', name: utf8(r.tail) }) },
  O: {
    tail: true,
    fields: 4,
    build: (r) => ({
      op: 'open',
      dirfd: int32(r.fields[0]),
      flags: int(r.fields[1]),
      mode: int(r.fields[2]),
      ret: int(r.fields[3]),
      path: utf8(r.tail),
    }),
  },
  C: { tail: false, fields: 1, build: (r) => ({ op: 'close', fd: int32(r.fields[0]) }) },
  W: { tail: false, fields: 3, build: (r) => ({ op: 'write', pid: int(r.fields[0]), fd: int32(r.fields[1]), bytes: int(r.fields[2]), final: true }) },
  D: { tail: false, fields: 2, build: (r) => ({ op: 'dup', oldfd: int32(r.fields[0]), newfd: int32(r.fields[1]) }) },
  P: { tail: false, fields: 3, build: (r) => ({ op: 'pipe', socket: r.fields[0] === '1', fds: [int32(r.fields[1]), int32(r.fields[2])] }) },
  K: { tail: true, fields: 2, build: (r) => ({ op: 'chdir', dirfd: int32(r.fields[0]), ret: int(r.fields[1]), path: utf8(r.tail) }) },
  R: {
    tail: true,
    fields: 3,
    build: (r, part) => ({
      op: 'rename',
      fromDirfd: int32(r.fields[0]),
      toDirfd: int32(r.fields[1]),
      ret: int(r.fields[2]),
      from: utf8(r.tail),
      to: part(1),
    }),
  },
  U: {
    tail: true,
    fields: 3,
    build: (r) => ({ op: 'unlink', dirfd: int32(r.fields[0]), directory: r.fields[1] === '1', ret: int(r.fields[2]), path: utf8(r.tail) }),
  },
  M: { tail: true, fields: 3, build: (r) => ({ op: 'mkdir', dirfd: int32(r.fields[0]), mode: int(r.fields[1]), ret: int(r.fields[2]), path: utf8(r.tail) }) },
  A: { tail: true, fields: 3, build: (r) => ({ op: 'chmod', dirfd: int32(r.fields[0]), mode: int(r.fields[1]), ret: int(r.fields[2]), path: utf8(r.tail) }) },
  G: {
    tail: true,
    fields: 4,
    build: (r) => ({
      op: 'chown',
      dirfd: int32(r.fields[0]),
      uid: int32(r.fields[1]),
      gid: int32(r.fields[2]),
      ret: int(r.fields[3]),
      path: utf8(r.tail),
    }),
  },
  L: {
    tail: true,
    fields: 4,
    build: (r, part) => ({
      op: 'link',
      symbolic: r.fields[0] === '1',
      targetDirfd: int32(r.fields[1]),
      dirfd: int32(r.fields[2]),
      ret: int(r.fields[3]),
      target: utf8(r.tail),
      path: part(1),
    }),
  },
  S: {
    tail: false,
    fields: 4,
    build: (r) => ({ op: 'socket', family: int(r.fields[0]), type: int(r.fields[1]), protocol: int(r.fields[2]), ret: int(r.fields[3]) }),
  },
  Y: {
    tail: true,
    fields: 7,
    build: (r) => {
      const call = r.fields[0];
      const fd = int32(r.fields[1]);
      const ret = int(r.fields[2]);
      const address = addressOf(r);
      if (call === '2') return { op: 'send', fd, address, ret };
      return { op: call === '0' ? 'connect' : 'bind', fd, address, ret };
    },
  },
  I: { tail: false, fields: 2, build: (r) => ({ op: 'listen', fd: int32(r.fields[0]), ret: int(r.fields[1]) }) },
  J: { tail: false, fields: 2, build: (r) => ({ op: 'accept', fd: int32(r.fields[0]), ret: int(r.fields[1]) }) },
  m: { tail: true, fields: 1, build: (r) => ({ op: 'memfd', ret: int(r.fields[0]), name: utf8(r.tail) }) },
  x: {
    tail: false,
    fields: 5,
    build: (r) => ({
      op: 'exec_map',
      call: r.fields[0] === '1' ? 'mprotect' : 'mmap',
      address: BigInt(`0x${r.fields[1] || '0'}`),
      length: int(r.fields[2]),
      prot: int(r.fields[3]),
      fd: int32(r.fields[4]),
    }),
  },
  t: { tail: false, fields: 3, build: (r) => ({ op: 'ptrace', request: int(r.fields[0]), target: int(r.fields[1]), ret: int(r.fields[2]) }) },
  k: {
    tail: true,
    fields: 3,
    build: (r) => ({
      op: 'module',
      call: MODULE_CALLS[int(r.fields[0])] ?? 'init_module',
      fd: int32(r.fields[1]),
      ret: int(r.fields[2]),
      name: utf8(r.tail),
    }),
  },
  u: {
    tail: false,
    fields: 5,
    build: (r) => {
      const call = SETID_CALLS[int(r.fields[0])];
      if (!call) return null;
      const count = SETID_ARGS[call]!.length;
      return { op: 'setid', call, ids: r.fields.slice(1, 1 + count).map((v) => int32(v)), ret: int(r.fields[4]) };
    },
  },
  g: { tail: false, fields: 3, build: (r) => ({ op: 'kill', target: int(r.fields[0]), signal: int(r.fields[1]), ret: int(r.fields[2]) }) },
};
