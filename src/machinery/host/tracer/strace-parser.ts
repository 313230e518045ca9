import { constants } from 'node:os';
import { posix } from 'node:path';
import { decodeSockaddr } from './sockaddr.js';
import { PAYLOAD_BYTES, SETID_CALLS, type SocketAddress, type TraceOp, type TraceRecord } from './trace-records.js';

/**
 * Reads the output of `strace -f -ttt -q -xx -X raw` (see strace.ts) and turns it into trace records,
 * each named by its call (`api`). `-xx` prints every string byte as \xNN and `-X raw` every constant as a
 * number, so arguments parse without knowing strace's symbolic names. Every traced call is counted per
 * process (strace sees only the calls it traces), and the counts are given when the process exits or
 * the trace ends (`finish`).
 */
type Value =
  | { t: 'num'; v: bigint }
  | { t: 'str'; v: Buffer }
  | { t: 'arr'; v: Value[] }
  | { t: 'obj'; v: Map<string, Value> }
  | { t: 'other'; v: string };

interface Call {
  name: string;
  args: Value[];
  ret: bigint | null;
}

const CLONE_THREAD = 0x10000n;
/** Kernel-internal restart codes strace can show; not in os.constants. */
const EXTRA_ERRNO: Record<string, number> = { ERESTARTSYS: 512, ERESTARTNOINTR: 513, ERESTARTNOHAND: 514, ERESTART_RESTARTBLOCK: 516 };
/** Writes are passed on with their text when short: a write to /proc/self/comm renames the process. */
const MAX_WRITE_DATA = 64;
const F_DUPFD = 0;
const F_DUPFD_CLOEXEC = 1030;
const PR_SET_NAME = 15;
const TIMER_ABSTIME = 1;
const CLOCK_REALTIME = 0;
/** Calls a process may never return from (it is killed while it waits): recorded as they began. */
const SLEEP_CALLS = new Set(['nanosleep', 'clock_nanosleep']);

export class StraceParser {
  private readonly unfinished = new Map<number, { ts: number; text: string }>();
  /** Lines of tasks not introduced yet, held while a clone is in flight (see bornOfUnfinishedClone). */
  private readonly unborn: string[] = [];
  /** Thread id → process id, for threads made with CLONE_THREAD. */
  private readonly processOf = new Map<number, number>();
  private readonly seen = new Set<number>();
  /** Calls made so far by each process, by name. */
  private readonly counts = new Map<number, Map<string, number>>();

  /** `rootParent`: the pid of the traced program's parent (strace's), when known. */
  constructor(
    private readonly emit: (record: TraceRecord) => void,
    private readonly rootParent = 0,
  ) {}

  line(text: string): void {
    const match = /^(\d+)\s+(\d+\.\d+) (.*)$/.exec(text);
    if (!match) return;
    const tid = Number(match[1]);
    if (this.bornOfUnfinishedClone(tid)) {
      this.unborn.push(text);
      return;
    }
    let ts = Number(match[2]);
    let rest = match[3]!;
    if (rest.startsWith('+++ ')) {
      this.exitLine(ts, tid, rest);
      return;
    }
    if (rest.startsWith('---')) return;
    const unfinished = rest.indexOf(' <unfinished ...>');
    if (unfinished >= 0) {
      this.unfinished.set(tid, { ts, text: rest.slice(0, unfinished) });
      return;
    }
    const resumed = /^<\.\.\. [a-z0-9_]+ resumed>\s?(.*)$/.exec(rest);
    if (resumed) {
      const start = this.unfinished.get(tid);
      if (!start) return;
      this.unfinished.delete(tid);
      ts = start.ts;
      // An in/out struct resumes with its " => " (clone3), whose space the pattern took.
      rest = start.text + (resumed[1]!.startsWith('=>') ? ' ' : '') + resumed[1];
    }
    const call = parseCall(rest);
    if (call) this.call(ts, tid, call);
    if (resumed && this.unborn.length > 0 && !this.cloneInFlight()) this.replayUnborn();
  }

  /**
   * A task's first lines can come before the clone that made it returns in its parent (strace prints
   * both threads as they run): until the clone says whether it is a thread or a process, its lines wait.
   */
  private bornOfUnfinishedClone(tid: number): boolean {
    return !this.seen.has(tid) && !this.unfinished.has(tid) && this.cloneInFlight();
  }

  private cloneInFlight(): boolean {
    for (const { text } of this.unfinished.values()) if (/^(clone3?|v?fork)\(/.test(text)) return true;
    return false;
  }

  private replayUnborn(): void {
    const lines = this.unborn.splice(0);
    for (const line of lines) this.line(line);
  }

  /** The trace has ended: sleeps never returned from, and the counts of processes that did not exit. */
  finish(ts: number): void {
    for (const tid of [...this.unfinished.keys()]) this.endUnfinished(tid);
    this.replayUnborn();
    for (const pid of [...this.counts.keys()]) this.emitCounts(ts, pid);
  }

  private exitLine(ts: number, tid: number, text: string): void {
    this.endUnfinished(tid);
    if ((this.processOf.get(tid) ?? tid) !== tid) return;
    const exited = /^\+\+\+ exited with (\d+) \+\+\+/.exec(text);
    const killed = /^\+\+\+ killed by (SIG[A-Z0-9]+)/.exec(text);
    if (!exited && !killed) return;
    this.identify(ts, tid);
    const code = exited ? Number(exited[1]) : -(constants.signals[killed![1] as keyof typeof constants.signals] ?? 0);
    this.emit({ ts, tid, op: 'exit', code });
    this.emitCounts(ts, tid);
  }

  /** A sleep the thread never came back from (killed while waiting) still happened: it is recorded. */
  private endUnfinished(tid: number): void {
    const start = this.unfinished.get(tid);
    if (!start) return;
    this.unfinished.delete(tid);
    const call = parseCall(`${start.text.replace(/,\s*$/, '')}) = ?`);
    if (call && SLEEP_CALLS.has(call.name)) this.call(start.ts, tid, call);
  }

  private emitCounts(ts: number, pid: number): void {
    const counts = this.counts.get(pid);
    if (!counts) return;
    this.counts.delete(pid);
    this.emit({ ts, tid: pid, op: 'counts', pid, counts: Object.fromEntries(counts) });
  }

  private count(tid: number, name: string): void {
    const pid = this.processOf.get(tid) ?? tid;
    let counts = this.counts.get(pid);
    if (!counts) {
      counts = new Map();
      this.counts.set(pid, counts);
    }
    counts.set(name, (counts.get(name) ?? 0) + 1);
  }

  /** The sample's first process is first seen without a fork: its parent is strace. */
  private identify(ts: number, tid: number): void {
    if (this.seen.has(tid)) return;
    this.seen.add(tid);
    this.emit({ ts, tid, op: 'identity', pid: this.processOf.get(tid) ?? tid, ppid: this.rootParent, comm: '' });
  }

  private call(ts: number, tid: number, call: Call): void {
    this.identify(ts, tid);
    this.count(tid, call.name);
    if (call.name === 'execve' || call.name === 'execveat') this.renameOnExec(ts, tid, call);
    const op = this.opOf(ts, tid, call);
    if (!op) return;
    for (const one of Array.isArray(op) ? op : [op]) this.emit({ ts, tid, api: call.name, ...one });
  }

  /** The kernel names a process after the file it executes (the eBPF tracer reads the name it gave). */
  private renameOnExec(ts: number, tid: number, call: Call): void {
    if (call.ret !== 0n) return;
    const path = str(call.args[call.name === 'execveat' ? 1 : 0]);
    const pid = this.processOf.get(tid) ?? tid;
    this.emit({ ts, tid, op: 'identity', pid, ppid: 0, comm: posix.basename(path).slice(0, 15) });
  }

  private opOf(ts: number, tid: number, call: Call): TraceOp | TraceOp[] | null {
    const a = call.args;
    const ret = call.ret === null ? 0 : Number(call.ret);
    switch (call.name) {
      case 'clone':
      case 'clone3':
      case 'fork':
      case 'vfork':
        return this.clone(ts, tid, call, ret);
      case 'execve':
        return { op: 'exec', dirfd: -100, path: str(a[0]), argv: strings(a[1]), ret };
      case 'execveat':
        return { op: 'exec', dirfd: num(a[0]), path: str(a[1]), argv: strings(a[2]), ret };
      case 'prctl':
        if (num(a[0]) === PR_SET_NAME) return ret === 0 ? { op: 'rename_task', name: str(a[1]).slice(0, 15) } : null;
        return { op: 'call', args: { option: num(a[0]), arg2: num(a[1]) }, ret };
      case 'open':
        return { op: 'open', dirfd: -100, path: str(a[0]), flags: num(a[1]), mode: num(a[2]), ret };
      case 'openat':
        return { op: 'open', dirfd: num(a[0]), path: str(a[1]), flags: num(a[2]), mode: num(a[3]), ret };
      case 'openat2': {
        const how = a[2]?.t === 'obj' ? a[2].v : new Map<string, Value>();
        return { op: 'open', dirfd: num(a[0]), path: str(a[1]), flags: num(how.get('flags')), mode: num(how.get('mode')), ret };
      }
      case 'creat':
        return { op: 'open', dirfd: -100, path: str(a[0]), flags: 0o1101, mode: num(a[1]), ret };
      case 'close':
        return { op: 'close', fd: num(a[0]) };
      case 'write':
      case 'pwrite64':
      case 'writev':
      case 'pwritev':
      case 'pwritev2': {
        if (ret <= 0) return null;
        const data = call.name === 'write' && a[1]?.t === 'str' && ret <= MAX_WRITE_DATA ? a[1].v.toString('utf8') : undefined;
        return { op: 'write', fd: num(a[0]), bytes: ret, ...(data !== undefined ? { data } : {}) };
      }
      case 'dup':
        return ret >= 0 ? { op: 'dup', oldfd: num(a[0]), newfd: ret } : null;
      case 'dup2':
      case 'dup3':
        return ret >= 0 ? { op: 'dup', oldfd: num(a[0]), newfd: ret } : null;
      case 'fcntl':
      case 'fcntl64':
        if (num(a[1]) === F_DUPFD || num(a[1]) === F_DUPFD_CLOEXEC) return ret >= 0 ? { op: 'dup', oldfd: num(a[0]), newfd: ret } : null;
        return { op: 'call', args: { fd: num(a[0]), cmd: num(a[1]), arg: num(a[2]) }, ret };
      case 'pipe':
      case 'pipe2':
        return ret === 0 ? { op: 'pipe', socket: false, fds: pair(a[0]) } : null;
      case 'socketpair':
        return ret === 0 ? { op: 'pipe', socket: true, fds: pair(a[3]) } : null;
      case 'chdir':
        return { op: 'chdir', dirfd: -100, path: str(a[0]), ret };
      case 'fchdir':
        return { op: 'chdir', dirfd: num(a[0]), path: '', ret };
      case 'rename':
        return { op: 'rename', fromDirfd: -100, from: str(a[0]), toDirfd: -100, to: str(a[1]), ret };
      case 'renameat':
      case 'renameat2':
        return { op: 'rename', fromDirfd: num(a[0]), from: str(a[1]), toDirfd: num(a[2]), to: str(a[3]), ret };
      case 'unlink':
        return { op: 'unlink', dirfd: -100, path: str(a[0]), directory: false, ret };
      case 'rmdir':
        return { op: 'unlink', dirfd: -100, path: str(a[0]), directory: true, ret };
      case 'unlinkat':
        return { op: 'unlink', dirfd: num(a[0]), path: str(a[1]), directory: (num(a[2]) & 0x200) !== 0, ret };
      case 'mkdir':
        return { op: 'mkdir', dirfd: -100, path: str(a[0]), mode: num(a[1]), ret };
      case 'mkdirat':
        return { op: 'mkdir', dirfd: num(a[0]), path: str(a[1]), mode: num(a[2]), ret };
      case 'chmod':
        return { op: 'chmod', dirfd: -100, path: str(a[0]), mode: num(a[1]), ret };
      case 'fchmod':
        return { op: 'chmod', dirfd: num(a[0]), path: '', mode: num(a[1]), ret };
      case 'fchmodat':
        return { op: 'chmod', dirfd: num(a[0]), path: str(a[1]), mode: num(a[2]), ret };
      case 'chown':
      case 'lchown':
        return { op: 'chown', dirfd: -100, path: str(a[0]), uid: num(a[1]), gid: num(a[2]), ret };
      case 'fchown':
        return { op: 'chown', dirfd: num(a[0]), path: '', uid: num(a[1]), gid: num(a[2]), ret };
      case 'fchownat':
        return { op: 'chown', dirfd: num(a[0]), path: str(a[1]), uid: num(a[2]), gid: num(a[3]), ret };
      case 'link':
        return { op: 'link', target: str(a[0]), targetDirfd: -100, dirfd: -100, path: str(a[1]), symbolic: false, ret };
      case 'linkat':
        return { op: 'link', target: str(a[1]), targetDirfd: num(a[0]), dirfd: num(a[2]), path: str(a[3]), symbolic: false, ret };
      case 'symlink':
        return { op: 'link', target: str(a[0]), targetDirfd: -100, dirfd: -100, path: str(a[1]), symbolic: true, ret };
      case 'symlinkat':
        return { op: 'link', target: str(a[0]), targetDirfd: -100, dirfd: num(a[1]), path: str(a[2]), symbolic: true, ret };
      case 'socket':
        return { op: 'socket', family: num(a[0]), type: num(a[1]), protocol: num(a[2]), ret };
      case 'connect':
      case 'bind':
        return { op: call.name, fd: num(a[0]), address: sockaddr(a[1]), ret };
      case 'sendto':
      case 'recvfrom':
        return { op: call.name === 'sendto' ? 'send' : 'recv', fd: num(a[0]), address: sockaddr(a[4]), ret, ...payload(a[1], ret) };
      case 'sendmsg':
      case 'recvmsg': {
        const message = a[1]?.t === 'obj' ? a[1].v : undefined;
        const op = call.name === 'sendmsg' ? 'send' : 'recv';
        return { op, fd: num(a[0]), address: sockaddr(message?.get('msg_name')), ret, ...payload(firstIov(message), ret) };
      }
      case 'nanosleep':
        return { op: 'sleep', seconds: seconds(a[0]), ret };
      case 'clock_nanosleep':
        return this.clockSleep(ts, num(a[0]), num(a[1]), a[2], ret);
      case 'alarm':
        return num(a[0]) > 0 ? { op: 'sleep', seconds: num(a[0]), ret } : { op: 'call', args: { seconds: 0 }, ret };
      case 'timerfd_settime': {
        const value = a[2]?.t === 'obj' ? a[2].v.get('it_value') : undefined;
        if ((num(a[1]) & TIMER_ABSTIME) === 0) return { op: 'sleep', seconds: seconds(value), ret };
        return { op: 'call', args: { fd: num(a[0]), flags: num(a[1]), seconds: seconds(value) }, ret };
      }
      case 'timerfd_create':
        return { op: 'call', args: { clockid: num(a[0]), flags: num(a[1]) }, ret };
      case 'setsid':
        return { op: 'call', args: {}, ret };
      case 'setpgid':
        return { op: 'call', args: { pid: num(a[0]), pgid: num(a[1]) }, ret };
      case 'capset':
        return { op: 'call', args: { pid: num(a[0]?.t === 'obj' ? a[0].v.get('pid') : undefined) }, ret };
      case 'mount':
        return { op: 'call', args: { source: str(a[0]), target: str(a[1]), filesystemtype: str(a[2]), mountflags: num(a[3]) }, ret };
      case 'umount2':
        return { op: 'call', args: { target: str(a[0]), flags: num(a[1]) }, ret };
      case 'truncate':
        return { op: 'call', args: { path: str(a[0]), length: num(a[1]) }, ret };
      case 'ftruncate':
        return { op: 'call', args: { fd: num(a[0]), length: num(a[1]) }, ret };
      case 'getdents64':
        return { op: 'call', args: { fd: num(a[0]), count: num(a[2]) }, ret };
      case 'listen':
        return { op: 'listen', fd: num(a[0]), ret };
      case 'accept':
      case 'accept4':
        return { op: 'accept', fd: num(a[0]), ret };
      case 'memfd_create':
        return { op: 'memfd', name: str(a[0]), ret };
      case 'mmap':
        if ((num(a[2]) & 4) === 0 || ret < 0) return null;
        return { op: 'exec_map', call: 'mmap', address: call.ret ?? 0n, length: num(a[1]), prot: num(a[2]), fd: (num(a[3]) & 0x20) !== 0 ? -1 : num(a[4]) };
      case 'mprotect':
        if ((num(a[2]) & 4) === 0 || ret !== 0) return null;
        return { op: 'exec_map', call: 'mprotect', address: big(a[0]), length: num(a[1]), prot: num(a[2]), fd: -1 };
      case 'ptrace':
        return { op: 'ptrace', request: num(a[0]), target: num(a[1]), ret };
      case 'init_module':
        return { op: 'module', call: 'init_module', fd: -1, name: '', ret };
      case 'finit_module':
        return { op: 'module', call: 'finit_module', fd: num(a[0]), name: '', ret };
      case 'delete_module':
        return { op: 'module', call: 'delete_module', fd: -1, name: str(a[0]), ret };
      case 'kill':
      case 'tkill':
        return { op: 'kill', target: num(a[0]), signal: num(a[1]), ret };
      case 'tgkill':
        return { op: 'kill', target: num(a[0]), signal: num(a[2]), ret };
      default:
        if ((SETID_CALLS as readonly string[]).includes(call.name)) {
          return { op: 'setid', call: call.name, ids: a.map((v) => num(v)), ret };
        }
        return null;
    }
  }

  /** A relative sleep, or an absolute one on the wall clock (as seconds from the call); others are plain calls. */
  private clockSleep(ts: number, clock: number, flags: number, request: Value | undefined, ret: number): TraceOp {
    const requested = seconds(request);
    if ((flags & TIMER_ABSTIME) === 0) return { op: 'sleep', seconds: requested, ret };
    if (clock === CLOCK_REALTIME) return { op: 'sleep', seconds: Math.max(0, requested - ts), ret };
    return { op: 'call', args: { clockid: clock, flags, seconds: requested }, ret };
  }

  private clone(ts: number, tid: number, call: Call, ret: number): TraceOp[] | null {
    if (ret <= 0) return null;
    const flags = call.name === 'clone' ? objectField(call.args, 'flags') : call.name === 'clone3' ? objectField(call.args, 'flags') : 0n;
    const pid = this.processOf.get(tid) ?? tid;
    // The new task is introduced here: a thread joins its process, a process comes with the fork.
    this.seen.add(ret);
    if ((flags & CLONE_THREAD) !== 0n) {
      this.processOf.set(ret, pid);
      this.emit({ ts, tid: ret, op: 'identity', pid, ppid: 0, comm: '' });
      return null;
    }
    return [{ op: 'fork', child: ret }];
  }
}

/** clone(child_stack=..., flags=...) names its arguments; clone3 passes a struct with a flags field. */
function objectField(args: Value[], name: string): bigint {
  for (const arg of args) {
    if (arg.t === 'obj') {
      const value = arg.v.get(name);
      if (value) return big(value);
    }
    if (arg.t === 'other' && arg.v.startsWith(`${name}=`)) return numberExpression(arg.v.slice(name.length + 1)) ?? 0n;
  }
  return 0n;
}

/** `{tv_sec=5, tv_nsec=500000000}` as seconds. */
function seconds(value: Value | undefined): number {
  if (value?.t !== 'obj') return 0;
  return num(value.v.get('tv_sec')) + num(value.v.get('tv_nsec')) / 1e9;
}

/** The bytes a send or receive moved (strace shows them up to its string limit), hex-encoded. */
function payload(value: Value | undefined, ret: number): { payload?: string } {
  if (value?.t !== 'str' || ret <= 0) return {};
  return { payload: value.v.subarray(0, Math.min(ret, PAYLOAD_BYTES)).toString('hex') };
}

/** The first buffer of a message's `msg_iov=[{iov_base="...", iov_len=N}, ...]`. */
function firstIov(message: Map<string, Value> | undefined): Value | undefined {
  const iov = message?.get('msg_iov');
  const first = iov?.t === 'arr' ? iov.v[0] : undefined;
  return first?.t === 'obj' ? first.v.get('iov_base') : undefined;
}

function num(value: Value | undefined): number {
  return Number(BigInt.asIntN(64, big(value)));
}

function big(value: Value | undefined): bigint {
  return value?.t === 'num' ? value.v : 0n;
}

function str(value: Value | undefined): string {
  return value?.t === 'str' ? value.v.toString('utf8') : '';
}

function strings(value: Value | undefined): string[] {
  return value?.t === 'arr' ? value.v.map((v) => str(v)) : [];
}

function pair(value: Value | undefined): [number, number] {
  const items = value?.t === 'arr' ? value.v : [];
  return [num(items[0]), num(items[1])];
}

/** strace prints socket addresses as `{sa_family=0x2, sin_port="\x00\x50", sin_addr="\x7f\x00\x00\x01"}`. */
function sockaddr(value: Value | undefined): SocketAddress | null {
  if (value?.t !== 'obj') return null;
  const fields = value.v;
  const family = num(fields.get('sa_family'));
  const bytes = Buffer.alloc(32);
  bytes.writeUInt16LE(family, 0);
  const copy = (name: string, offset: number) => {
    const field = fields.get(name);
    if (field?.t === 'str') field.v.copy(bytes, offset);
  };
  copy('sin_port', 2);
  copy('sin_addr', 4);
  copy('sin6_port', 2);
  copy('sin6_addr', 8);
  const path = fields.get('sun_path');
  return decodeSockaddr(bytes, path?.t === 'str' ? path.v.toString('utf8') : '');
}

/** `name(args) = ret [ERRNO (text)]`; null for lines that are not a finished call. */
export function parseCall(text: string): Call | null {
  const open = text.indexOf('(');
  if (open <= 0) return null;
  const name = text.slice(0, open);
  if (!/^[a-z0-9_]+$/.test(name)) return null;
  const parser = new ValueParser(text, open + 1);
  const args = parser.list(')');
  if (args === null) return null;
  const result = /^\s*=\s*(\S+)(?:\s+([A-Z][A-Z0-9_]*))?/.exec(text.slice(parser.at));
  if (!result) return { name, args, ret: null };
  const value = result[1] === '?' ? null : numberExpression(result[1]!);
  const errno = result[2];
  if (value === -1n && errno) {
    const code = constants.errno[errno as keyof typeof constants.errno] ?? EXTRA_ERRNO[errno] ?? 1;
    return { name, args, ret: BigInt(-code) };
  }
  return { name, args, ret: value };
}

/** `0x241`, `0640`, `-100`, `0x1200000|17`, `NULL`: null when the token is not a number. */
function numberExpression(token: string): bigint | null {
  if (token === 'NULL') return 0n;
  let total = 0n;
  for (const part of token.split('|')) {
    const negative = part.startsWith('-');
    const digits = negative ? part.slice(1) : part;
    let value: bigint;
    if (/^0x[0-9a-fA-F]+$/.test(digits)) value = BigInt(digits);
    else if (/^0[0-7]+$/.test(digits)) value = BigInt(`0o${digits.slice(1)}`);
    else if (/^\d+$/.test(digits)) value = BigInt(digits);
    else return null;
    total |= negative ? -value : value;
  }
  return total;
}

class ValueParser {
  constructor(
    private readonly text: string,
    public at: number,
  ) {}

  /** Values separated by ", " up to `close`; null when the text ends first. */
  list(close: string): Value[] | null {
    const values: Value[] = [];
    for (;;) {
      this.skipSpaceAndComments();
      if (this.at >= this.text.length) return null;
      if (this.text[this.at] === close) {
        this.at++;
        return values;
      }
      const before = this.at;
      const value = this.value();
      if (value === null) return null;
      if (!(value.t === 'other' && value.v === '...')) values.push(value);
      this.skipOutValue();
      if (this.text[this.at] === ',') this.at++;
      // Whatever this is, it is stepped over: parsing always moves on.
      if (this.at === before) this.at++;
    }
  }

  /** `{in} => {out}`: strace shows what the kernel wrote back; the value passed in is the one kept. */
  private skipOutValue(): void {
    this.skipSpaceAndComments();
    if (!this.text.startsWith('=>', this.at)) return;
    this.at += 2;
    this.skipSpaceAndComments();
    this.value();
    this.skipSpaceAndComments();
  }

  private value(): Value | null {
    const c = this.text[this.at];
    if (c === '"') return this.string();
    if (c === '[') {
      this.at++;
      const items = this.list(']');
      return items === null ? null : { t: 'arr', v: items };
    }
    if (c === '{') return this.object();
    const token = this.token();
    const number = numberExpression(token);
    return number === null ? { t: 'other', v: token } : { t: 'num', v: number };
  }

  private string(): Value {
    this.at++;
    const bytes: number[] = [];
    while (this.at < this.text.length && this.text[this.at] !== '"') {
      if (this.text[this.at] === '\\' && this.text[this.at + 1] === 'x') {
        bytes.push(parseInt(this.text.slice(this.at + 2, this.at + 4), 16));
        this.at += 4;
      } else {
        bytes.push(this.text.charCodeAt(this.at) & 0xff);
        this.at++;
      }
    }
    this.at++;
    if (this.text.startsWith('...', this.at)) this.at += 3;
    return { t: 'str', v: Buffer.from(bytes) };
  }

  private object(): Value | null {
    this.at++;
    const fields = new Map<string, Value>();
    for (;;) {
      this.skipSpaceAndComments();
      if (this.at >= this.text.length) return null;
      if (this.text[this.at] === '}') {
        this.at++;
        return { t: 'obj', v: fields };
      }
      const before = this.at;
      const key = /^([a-z_][a-z0-9_.]*)=(?!>)/i.exec(this.text.slice(this.at, this.at + 64));
      if (key) {
        this.at += key[0].length;
        const value = this.value();
        if (value === null) return null;
        fields.set(key[1]!, value);
      } else if (this.value() === null) {
        return null;
      }
      this.skipOutValue();
      if (this.text[this.at] === ',') this.at++;
      if (this.at === before) this.at++;
    }
  }

  /** A bare token, up to a separator at this nesting level (it may hold parentheses: `htons(80)`). */
  private token(): string {
    const start = this.at;
    let depth = 0;
    while (this.at < this.text.length) {
      const c = this.text[this.at]!;
      if (c === '(') depth++;
      else if (c === ')' && depth > 0) depth--;
      else if (depth === 0 && (c === ',' || c === ')' || c === ']' || c === '}')) break;
      this.at++;
    }
    return this.text.slice(start, this.at).trim();
  }

  private skipSpaceAndComments(): void {
    for (;;) {
      while (this.text[this.at] === ' ') this.at++;
      if (!this.text.startsWith('/*', this.at)) return;
      const end = this.text.indexOf('*/', this.at + 2);
      this.at = end < 0 ? this.text.length : end + 2;
    }
  }
}
