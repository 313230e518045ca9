import { CONTINUATION, SETID_ARGS, STRING_LIMIT } from './bpftrace-script.js';
import { decodeSockaddr } from './sockaddr.js';
import { SETID_CALLS, type TraceOp, type TraceRecord } from './trace-records.js';

/**
 * Reads what the program of `bpftrace-script.ts` prints (bpftrace's `-f json` lines) and turns it into
 * trace records, joining records with the string parts that belong to them.
 */
export type BpftraceOutput =
  | { kind: 'attached'; probes: number }
  /** A readiness probe answered (1: first attached, 2: last attached), or the program was armed (3). */
  | { kind: 'ready'; which: number; value: bigint }
  | { kind: 'lost'; count: number }
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
  fields: number;
  build: Builder;
}

const PRINTF_PREFIX = '{"type": "printf", "data": "';
const PRINTF_SUFFIX = '"}';

export class BpftraceOutputParser {
  private readonly pending = new Map<string, Pending>();

  constructor(
    private readonly toEpoch: (ns: bigint) => number,
    private readonly emit: (output: BpftraceOutput) => void,
  ) {}

  line(line: string): void {
    if (line === '') return;
    if (line.startsWith(PRINTF_PREFIX) && line.endsWith(PRINTF_SUFFIX)) {
      this.printf(unescapeBpftrace(line.slice(PRINTF_PREFIX.length, -PRINTF_SUFFIX.length)));
      return;
    }
    let message: { type?: string; data?: unknown };
    try {
      message = JSON.parse(line) as typeof message;
    } catch {
      return;
    }
    if (message.type === 'lost_events') {
      this.emit({ kind: 'lost', count: Number((message.data as { events?: number }).events ?? 0) });
    } else if (message.type === 'attached_probes') {
      this.emit({ kind: 'attached', probes: Number((message.data as { probes?: number }).probes ?? 0) });
    } else if (message.type === 'map') {
      this.writeTotals(message.data as Record<string, Record<string, number>>);
    }
  }

  /** The output has ended: records still waiting for parts are given with what arrived. */
  end(): void {
    for (const [key, entry] of this.pending) {
      this.pending.delete(key);
      if (entry.main) this.complete(entry.main, entry.parts);
    }
  }

  private printf(text: string): void {
    const body = text.endsWith('\n') ? text.slice(0, -1) : text;
    const head = splitFields(body, 4);
    if (!head) return;
    const [letter, nsText, tidText, partsText] = head.fields as [string, string, string, string];
    if (letter === 'r') {
      const [which = '0', value = '0'] = head.rest.split(' ');
      this.emit({ kind: 'ready', which: Number(which), value: BigInt(value) });
      return;
    }
    const ns = BigInt(nsText);
    const tid = Number(tidText);
    const key = `${tid}:${nsText}`;
    if (letter === 's') {
      const part = splitFields(head.rest, 0);
      const entry = this.entry(key);
      entry.parts.set(Number(partsText), part ? part.rest : '');
      this.tryComplete(key, entry);
      return;
    }
    const spec = SPECS[letter];
    if (!spec) return;
    const rest = splitFields(head.rest, spec.fields);
    if (!rest) return;
    const raw: RawRecord = { letter, ns, tid, parts: Number(partsText), fields: rest.fields, tail: rest.rest };
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

  /** The END probe's per-(pid, fd) write totals that no close reported. */
  private writeTotals(data: Record<string, Record<string, number>>): void {
    const totals = data['@wb'];
    if (!totals) return;
    const ts = this.toEpoch(process.hrtime.bigint());
    for (const [key, bytes] of Object.entries(totals)) {
      const [pid, fd] = key.split(',').map((v) => Number(v.trim()));
      if (pid === undefined || fd === undefined || !(bytes > 0)) continue;
      this.emit({ kind: 'record', record: { ts, tid: pid, op: 'write', pid, fd: fd | 0, bytes } });
    }
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

/**
 * bpftrace 0.17 escapes printf output for JSON itself, and writes bytes >= 0x80 as `\uffffffXX`
 * (a sign-extended char), which JSON.parse misreads. Returns the bytes, one char per byte.
 */
export function unescapeBpftrace(text: string): string {
  let out = '';
  for (let i = 0; i < text.length; i++) {
    const c = text[i]!;
    if (c !== '\\') {
      out += c;
      continue;
    }
    const next = text[++i];
    switch (next) {
      case 'n':
        out += '\n';
        break;
      case 't':
        out += '\t';
        break;
      case 'r':
        out += '\r';
        break;
      case 'b':
        out += '\b';
        break;
      case 'f':
        out += '\f';
        break;
      case 'u': {
        const wide = /^[0-9a-fA-F]{8}/.test(text.slice(i + 1, i + 9)) && text.slice(i + 1, i + 7).toLowerCase() === 'ffffff';
        const digits = wide ? 8 : 4;
        out += String.fromCharCode(parseInt(text.slice(i + 1, i + 1 + digits), 16) & 0xff);
        i += digits;
        break;
      }
      default:
        out += next ?? '';
    }
  }
  return out;
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
  h: { fields: 2, build: (r) => ({ op: 'identity', pid: int(r.fields[0]), ppid: int(r.fields[1]), comm: utf8(r.tail) }) },
  F: { fields: 1, build: (r) => ({ op: 'fork', child: int(r.fields[0]) }) },
  X: {
    fields: 1,
    build: (r, part, argc) => ({ op: 'exec', path: utf8(r.tail), dirfd: -100, argv: argvOf(argc, part), ret: 0 }),
  },
  E: {
    fields: 2,
    build: (r, part, argc) => ({
      op: 'exec',
      path: utf8(r.tail),
      dirfd: int32(r.fields[1]),
      argv: argvOf(argc, part),
      ret: int(r.fields[0]),
    }),
  },
  Q: { fields: 1, build: (r) => ({ op: 'exit', code: exitCodeOf(int(r.fields[0])) }) },
  N: { fields: 1, build: (r) => ({ op: 'rename_task', name: utf8(r.tail) }) },
  O: {
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
  C: { fields: 1, build: (r) => ({ op: 'close', fd: int32(r.fields[0]) }) },
  W: { fields: 3, build: (r) => ({ op: 'write', pid: int(r.fields[0]), fd: int32(r.fields[1]), bytes: int(r.fields[2]) }) },
  D: { fields: 2, build: (r) => ({ op: 'dup', oldfd: int32(r.fields[0]), newfd: int32(r.fields[1]) }) },
  P: { fields: 3, build: (r) => ({ op: 'pipe', socket: r.fields[0] === '1', fds: [int32(r.fields[1]), int32(r.fields[2])] }) },
  K: { fields: 2, build: (r) => ({ op: 'chdir', dirfd: int32(r.fields[0]), ret: int(r.fields[1]), path: utf8(r.tail) }) },
  R: {
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
    fields: 3,
    build: (r) => ({ op: 'unlink', dirfd: int32(r.fields[0]), directory: r.fields[1] === '1', ret: int(r.fields[2]), path: utf8(r.tail) }),
  },
  M: { fields: 3, build: (r) => ({ op: 'mkdir', dirfd: int32(r.fields[0]), mode: int(r.fields[1]), ret: int(r.fields[2]), path: utf8(r.tail) }) },
  A: { fields: 3, build: (r) => ({ op: 'chmod', dirfd: int32(r.fields[0]), mode: int(r.fields[1]), ret: int(r.fields[2]), path: utf8(r.tail) }) },
  G: {
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
    fields: 4,
    build: (r) => ({ op: 'socket', family: int(r.fields[0]), type: int(r.fields[1]), protocol: int(r.fields[2]), ret: int(r.fields[3]) }),
  },
  Y: {
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
  I: { fields: 2, build: (r) => ({ op: 'listen', fd: int32(r.fields[0]), ret: int(r.fields[1]) }) },
  J: { fields: 2, build: (r) => ({ op: 'accept', fd: int32(r.fields[0]), ret: int(r.fields[1]) }) },
  m: { fields: 1, build: (r) => ({ op: 'memfd', ret: int(r.fields[0]), name: utf8(r.tail) }) },
  x: {
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
  t: { fields: 3, build: (r) => ({ op: 'ptrace', request: int(r.fields[0]), target: int(r.fields[1]), ret: int(r.fields[2]) }) },
  k: {
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
    fields: 5,
    build: (r) => {
      const call = SETID_CALLS[int(r.fields[0])];
      if (!call) return null;
      const count = SETID_ARGS[call]!.length;
      return { op: 'setid', call, ids: r.fields.slice(1, 1 + count).map((v) => int32(v)), ret: int(r.fields[4]) };
    },
  },
  g: { fields: 3, build: (r) => ({ op: 'kill', target: int(r.fields[0]), signal: int(r.fields[1]), ret: int(r.fields[2]) }) },
};
