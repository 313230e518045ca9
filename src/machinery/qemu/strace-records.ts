import { posix } from 'node:path';
import { formatIpv6 } from '../linux/tracer/sockaddr.js';
import { AT_FDCWD, familyName, SETID_CALLS, type SocketAddress, type TraceOp, type TraceRecord } from '../linux/tracer/trace-records.js';
import {
  address,
  closingParenthesis,
  integer,
  numberArray,
  splitTopLevel,
  stringArray,
  stringBytes,
  structFields,
  text,
} from './strace-syntax.js';

/**
 * Turns the output of strace inside a QEMU guest (`strace -f -ttt -q -x -X raw -o <port>`) into the
 * system-call records the Linux machinery's event decoder reads, so both machine kinds write the same
 * behaviour log. Each line is `<tid> <epoch seconds> <call>(<args>) = <ret>`; calls interrupted by
 * another thread come as `... <unfinished ...>` and later `<... name resumed>...`, which are joined.
 * Threads are told from processes by the CLONE_THREAD flag of the clone that made them.
 */
export const TRACED_CALLS = [
  'execve', 'execveat', 'fork', 'vfork', 'clone', 'clone3',
  'open', 'openat', 'creat', 'close', 'write', 'pwrite64', 'writev',
  'dup', 'dup2', 'dup3', 'pipe', 'pipe2', 'socketpair', 'chdir', 'fchdir',
  'rename', 'renameat', 'renameat2', 'unlink', 'unlinkat', 'rmdir', 'mkdir', 'mkdirat',
  'chmod', 'fchmod', 'fchmodat', 'chown', 'fchown', 'lchown', 'fchownat',
  'link', 'linkat', 'symlink', 'symlinkat',
  'socket', 'connect', 'bind', 'listen', 'accept', 'accept4', 'sendto', 'sendmsg',
  'memfd_create', 'mmap', 'mprotect', 'ptrace', 'init_module', 'finit_module', 'delete_module',
  'setuid', 'setgid', 'setreuid', 'setregid', 'setresuid', 'setresgid', 'setfsuid', 'setfsgid',
  'kill', 'tkill', 'tgkill', 'prctl',
];

/**
 * The strace options this parser reads the output of (the analyzer adds `-o <port> -- <command>`).
 * --seccomp-bpf stops only at the traced calls: about 15x slower than untraced code instead of 100x.
 */
export function straceOptions(): string[] {
  return ['-f', '-ttt', '-q', '-x', '-s', '256', '-X', 'raw', '--seccomp-bpf', '-e', `trace=${TRACED_CALLS.join(',')}`, '-e', 'signal=none'];
}

const CLONE_THREAD = 0x10000;
const O_CREAT_WRONLY_TRUNC = 0x241;
const AT_REMOVEDIR = 0x200;
const PR_SET_NAME = 15;
const PROT_EXEC = 4;
const COMM_LENGTH = 15;
const LINE = /^(\d+)\s+(\d+(?:\.\d+)?)\s+(.*)$/;

interface Thread {
  pid: number;
  ppid: number;
  comm: string;
}

export class StraceRecords {
  private readonly threads = new Map<number, Thread>();
  private readonly unfinished = new Map<number, string>();

  /** `rootParent` is the pid the traced program's parent has (strace's own pid is as good as any). */
  constructor(
    private readonly emit: (record: TraceRecord) => void,
    private readonly rootParent = 0,
  ) {}

  line(raw: string): void {
    const match = LINE.exec(raw.trimEnd());
    if (!match) return;
    const tid = Number(match[1]);
    const ts = Number(match[2]);
    const body = match[3]!;
    this.see(tid, ts);
    if (body.startsWith('+++ ')) return this.exit(tid, ts, body);
    if (body.startsWith('--- ')) return; // signal deliveries
    if (body.startsWith('<... ')) return this.resumed(tid, ts, body);
    if (body.endsWith('<unfinished ...>')) {
      this.unfinished.set(tid, body.slice(0, -'<unfinished ...>'.length).trimEnd());
      return;
    }
    this.call(tid, ts, body);
  }

  private resumed(tid: number, ts: number, body: string): void {
    const start = this.unfinished.get(tid);
    this.unfinished.delete(tid);
    const rest = /^<\.\.\. \w+ resumed>\s?(.*)$/.exec(body)?.[1];
    if (start === undefined || rest === undefined) return;
    this.call(tid, ts, joinArguments(start, rest));
  }

  /** A thread first seen: its process is itself, with the traced program's parent, until a clone says otherwise. */
  private see(tid: number, ts: number): void {
    if (this.threads.has(tid)) return;
    const thread = { pid: tid, ppid: this.rootParent, comm: '' };
    this.threads.set(tid, thread);
    this.emit({ ts, tid, op: 'identity', pid: thread.pid, ppid: thread.ppid, comm: thread.comm });
  }

  private exit(tid: number, ts: number, body: string): void {
    const thread = this.threads.get(tid)!;
    this.unfinished.delete(tid);
    // A thread's end is not its process's end.
    if (thread.pid !== tid) return;
    const exited = /exited with (\d+)/.exec(body);
    const killed = /killed by SIG\w+/.exec(body) ? signalNumber(body) : null;
    const code = exited ? Number(exited[1]) : killed !== null ? -killed : 0;
    this.emit({ ts, tid, op: 'exit', code });
  }

  private call(tid: number, ts: number, body: string): void {
    const open = body.indexOf('(');
    if (open <= 0) return;
    const name = body.slice(0, open);
    const close = closingParenthesis(body, open);
    if (close < 0) return;
    const args = splitTopLevel(body.slice(open + 1, close));
    const result = /^\s*=\s*(\S+)/.exec(body.slice(close + 1))?.[1];
    const ret = result === undefined || result === '?' ? 0 : integer(result);
    // A thread's identity record carries the new thread's id, not the caller's.
    for (const op of this.decode(tid, name, args, Number.isNaN(ret) ? 0 : ret)) this.emit({ ts, tid, ...op } as TraceRecord);
  }

  private decode(tid: number, name: string, a: string[], ret: number): (TraceOp | (TraceOp & { tid: number }))[] {
    switch (name) {
      case 'execve':
      case 'execveat': {
        const at = name === 'execveat' ? 1 : 0;
        const path = text(a[at]);
        const ops: TraceOp[] = [{ op: 'exec', dirfd: at ? integer(a[0]) : AT_FDCWD, path, argv: stringArray(a[at + 1]), ret }];
        if (ret === 0) ops.push(this.renamed(tid, posix.basename(path)));
        return ops;
      }
      case 'fork':
      case 'vfork':
        return ret > 0 ? [this.child(tid, ret, false)] : [];
      case 'clone':
        return ret > 0 ? [this.child(tid, ret, (integer(structOrFlag(a, 'flags')) & CLONE_THREAD) !== 0)] : [];
      case 'clone3':
        return ret > 0 ? [this.child(tid, ret, (integer(structFields(a[0]).get('flags')) & CLONE_THREAD) !== 0)] : [];
      case 'open':
        return [{ op: 'open', dirfd: AT_FDCWD, path: text(a[0]), flags: integer(a[1]), mode: integer(a[2]) || 0, ret }];
      case 'openat':
        return [{ op: 'open', dirfd: integer(a[0]), path: text(a[1]), flags: integer(a[2]), mode: integer(a[3]) || 0, ret }];
      case 'creat':
        return [{ op: 'open', dirfd: AT_FDCWD, path: text(a[0]), flags: O_CREAT_WRONLY_TRUNC, mode: integer(a[1]), ret }];
      case 'close':
        return ret === 0 ? [{ op: 'close', fd: integer(a[0]) }] : [];
      case 'write':
      case 'pwrite64':
        return ret > 0 ? [{ op: 'write', fd: integer(a[0]), bytes: ret, data: stringBytes(a[1])?.toString('utf8') ?? '' }] : [];
      case 'writev':
        return ret > 0 ? [{ op: 'write', fd: integer(a[0]), bytes: ret }] : [];
      case 'dup':
        return ret >= 0 ? [{ op: 'dup', oldfd: integer(a[0]), newfd: ret }] : [];
      case 'dup2':
      case 'dup3':
        return ret >= 0 ? [{ op: 'dup', oldfd: integer(a[0]), newfd: integer(a[1]) }] : [];
      case 'pipe':
      case 'pipe2':
        return pair(a[0], false, ret);
      case 'socketpair':
        return pair(a[3], true, ret);
      case 'chdir':
        return [{ op: 'chdir', dirfd: AT_FDCWD, path: text(a[0]), ret }];
      case 'fchdir':
        return [{ op: 'chdir', dirfd: integer(a[0]), path: '', ret }];
      case 'rename':
        return [{ op: 'rename', fromDirfd: AT_FDCWD, from: text(a[0]), toDirfd: AT_FDCWD, to: text(a[1]), ret }];
      case 'renameat':
      case 'renameat2':
        return [{ op: 'rename', fromDirfd: integer(a[0]), from: text(a[1]), toDirfd: integer(a[2]), to: text(a[3]), ret }];
      case 'unlink':
      case 'rmdir':
        return [{ op: 'unlink', dirfd: AT_FDCWD, path: text(a[0]), directory: name === 'rmdir', ret }];
      case 'unlinkat':
        return [{ op: 'unlink', dirfd: integer(a[0]), path: text(a[1]), directory: (integer(a[2]) & AT_REMOVEDIR) !== 0, ret }];
      case 'mkdir':
        return [{ op: 'mkdir', dirfd: AT_FDCWD, path: text(a[0]), mode: integer(a[1]), ret }];
      case 'mkdirat':
        return [{ op: 'mkdir', dirfd: integer(a[0]), path: text(a[1]), mode: integer(a[2]), ret }];
      case 'chmod':
        return [{ op: 'chmod', dirfd: AT_FDCWD, path: text(a[0]), mode: integer(a[1]), ret }];
      case 'fchmod':
        return [{ op: 'chmod', dirfd: integer(a[0]), path: '', mode: integer(a[1]), ret }];
      case 'fchmodat':
        return [{ op: 'chmod', dirfd: integer(a[0]), path: text(a[1]), mode: integer(a[2]), ret }];
      case 'chown':
      case 'lchown':
        return [{ op: 'chown', dirfd: AT_FDCWD, path: text(a[0]), uid: integer(a[1]) | 0, gid: integer(a[2]) | 0, ret }];
      case 'fchown':
        return [{ op: 'chown', dirfd: integer(a[0]), path: '', uid: integer(a[1]) | 0, gid: integer(a[2]) | 0, ret }];
      case 'fchownat':
        return [{ op: 'chown', dirfd: integer(a[0]), path: text(a[1]), uid: integer(a[2]) | 0, gid: integer(a[3]) | 0, ret }];
      case 'link':
        return [{ op: 'link', target: text(a[0]), targetDirfd: AT_FDCWD, dirfd: AT_FDCWD, path: text(a[1]), symbolic: false, ret }];
      case 'linkat':
        return [{ op: 'link', target: text(a[1]), targetDirfd: integer(a[0]), dirfd: integer(a[2]), path: text(a[3]), symbolic: false, ret }];
      case 'symlink':
        return [{ op: 'link', target: text(a[0]), targetDirfd: AT_FDCWD, dirfd: AT_FDCWD, path: text(a[1]), symbolic: true, ret }];
      case 'symlinkat':
        return [{ op: 'link', target: text(a[0]), targetDirfd: AT_FDCWD, dirfd: integer(a[1]), path: text(a[2]), symbolic: true, ret }];
      case 'socket':
        return [{ op: 'socket', family: integer(a[0]), type: integer(a[1]), protocol: integer(a[2]), ret }];
      case 'connect':
      case 'bind':
        return [{ op: name, fd: integer(a[0]), address: socketAddress(a[1]), ret }];
      case 'sendto':
        return [{ op: 'send', fd: integer(a[0]), address: socketAddress(a[4]), ret }];
      case 'sendmsg':
        return [{ op: 'send', fd: integer(a[0]), address: socketAddress(structFields(a[1]).get('msg_name')), ret }];
      case 'listen':
        return [{ op: 'listen', fd: integer(a[0]), ret }];
      case 'accept':
      case 'accept4':
        return [{ op: 'accept', fd: integer(a[0]), ret }];
      case 'memfd_create':
        return [{ op: 'memfd', name: text(a[0]), ret }];
      case 'mmap':
        return (integer(a[2]) & PROT_EXEC) !== 0 && ret !== -1
          ? [{ op: 'exec_map', call: 'mmap', address: BigInt.asUintN(64, BigInt(ret)), length: integer(a[1]), prot: integer(a[2]), fd: integer(a[4]) }]
          : [];
      case 'mprotect':
        return (integer(a[2]) & PROT_EXEC) !== 0 && ret === 0
          ? [{ op: 'exec_map', call: 'mprotect', address: address(a[0]), length: integer(a[1]), prot: integer(a[2]), fd: -1 }]
          : [];
      case 'ptrace':
        return [{ op: 'ptrace', request: integer(a[0]), target: integer(a[1]), ret }];
      case 'init_module':
        return [{ op: 'module', call: name, fd: -1, name: '', ret }];
      case 'finit_module':
        return [{ op: 'module', call: name, fd: integer(a[0]), name: '', ret }];
      case 'delete_module':
        return [{ op: 'module', call: name, fd: -1, name: text(a[0]), ret }];
      case 'kill':
      case 'tkill':
        return [{ op: 'kill', target: integer(a[0]), signal: integer(a[1]), ret }];
      case 'tgkill':
        return [{ op: 'kill', target: integer(a[1]), signal: integer(a[2]), ret }];
      case 'prctl':
        return integer(a[0]) === PR_SET_NAME && ret === 0 ? [this.renamedTask(tid, text(a[1]))] : [];
      default:
        if ((SETID_CALLS as readonly string[]).includes(name)) return [{ op: 'setid', call: name, ids: a.map(integer), ret }];
        return [];
    }
  }

  /**
   * A new thread or process made by `tid`. The child's own first line can come before this one (strace
   * prints whichever runs first): `see()` then gave it a provisional identity, which this corrects.
   */
  private child(tid: number, child: number, isThread: boolean): TraceOp | (TraceOp & { tid: number }) {
    const parent = this.threads.get(tid)!;
    const thread = isThread
      ? { pid: parent.pid, ppid: parent.ppid, comm: parent.comm }
      : { pid: child, ppid: parent.pid, comm: parent.comm };
    this.threads.set(child, thread);
    if (isThread) return { op: 'identity', tid: child, pid: thread.pid, ppid: thread.ppid, comm: thread.comm };
    return { op: 'fork', child };
  }

  /** After a successful exec the process is named after its program, as the kernel names it. */
  private renamed(tid: number, program: string): TraceOp {
    const thread = this.threads.get(tid)!;
    thread.comm = program.slice(0, COMM_LENGTH);
    return { op: 'identity', pid: thread.pid, ppid: thread.ppid, comm: thread.comm };
  }

  private renamedTask(tid: number, name: string): TraceOp {
    this.threads.get(tid)!.comm = name.slice(0, COMM_LENGTH);
    return { op: 'rename_task', name: name.slice(0, COMM_LENGTH) };
  }
}

/** pipe's and socketpair's `[3, 4]`. */
function pair(value: string | undefined, socket: boolean, ret: number): TraceOp[] {
  const fds = numberArray(value);
  return ret === 0 && fds.length === 2 ? [{ op: 'pipe', fds: [fds[0]!, fds[1]!], socket }] : [];
}

function joinArguments(start: string, rest: string): string {
  // `connect(3, {...}, 16 <unfinished ...>` + `) = 0`; `read(3, ` + `"...", 832) = 832`.
  return `${start}${rest}`;
}

/** clone's flags argument, printed as `flags=0x1200000|17`. */
function structOrFlag(args: string[], name: string): string | undefined {
  const arg = args.find((value) => value.startsWith(`${name}=`));
  return arg?.slice(name.length + 1);
}

/** `{sa_family=0x2, sin_port="\x00\x50", sin_addr="\x7f\x00\x00\x01"}` and the inet6 and unix forms. */
function socketAddress(value: string | undefined): SocketAddress | null {
  const fields = structFields(value);
  const family = integer(fields.get('sa_family'));
  if (Number.isNaN(family)) return null;
  const port = stringBytes(fields.get('sin_port') ?? fields.get('sin6_port'));
  const portNumber = port && port.length === 2 ? port.readUInt16BE(0) : 0;
  if (family === 2) {
    const bytes = stringBytes(fields.get('sin_addr'));
    return { family: familyName(family), address: bytes && bytes.length === 4 ? [...bytes].join('.') : '', port: portNumber };
  }
  if (family === 10) {
    const bytes = stringBytes(fields.get('sin6_addr'));
    return { family: familyName(family), address: bytes && bytes.length === 16 ? formatIpv6(bytes) : '', port: portNumber };
  }
  if (family === 1) return { family: familyName(family), address: text(fields.get('sun_path')), port: 0 };
  return { family: familyName(family), address: '', port: 0 };
}

const SIGNALS: Record<string, number> = {
  SIGHUP: 1, SIGINT: 2, SIGQUIT: 3, SIGILL: 4, SIGTRAP: 5, SIGABRT: 6, SIGBUS: 7, SIGFPE: 8, SIGKILL: 9,
  SIGUSR1: 10, SIGSEGV: 11, SIGUSR2: 12, SIGPIPE: 13, SIGALRM: 14, SIGTERM: 15, SIGSYS: 31,
};

function signalNumber(body: string): number {
  const name = /killed by (SIG\w+)/.exec(body)?.[1] ?? '';
  return SIGNALS[name] ?? 0;
}
