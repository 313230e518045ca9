/**
 * System-call level records, the common language of both tracers: the bpftrace session and the strace
 * fallback each turn their own output into these, and `event-decoder.ts` turns them into behaviour
 * events (resolving file descriptors, relative paths and write totals on the way).
 *
 * Every record carries when it happened and which thread did it; which process that thread belongs to,
 * its parent and its name are learnt from `identity`, `fork` and `exec` records.
 */
export interface RecordHeader {
  /** Seconds since the epoch. */
  ts: number;
  tid: number;
  /**
   * The system call's name as the kernel knows it (`openat`, `creat`, `clone3`, `dup2`, `sendto`...),
   * when the tracer knows it: several calls share one op. Reports name calls by it.
   */
  api?: string;
  /**
   * How many more times the same call was made right after this one, with the same arguments and
   * result (a loop the tracer folded into one record, like Cuckoo's monitor); absent for a single call.
   */
  repeated?: number;
}

/** At most this many bytes of a socket payload are recorded. */
export const PAYLOAD_BYTES = 256;

/** `AT_FDCWD`: a directory argument meaning "the current directory". */
export const AT_FDCWD = -100;

export interface SocketAddress {
  family: string;
  address: string;
  port: number;
}

export type TraceOp =
  /**
   * First sight of a thread (or its new name after exec): the process it belongs to and that process's
   * parent; `nstid`: the thread's id inside its pid namespace, when it lives in one (a linux machine's).
   */
  | { op: 'identity'; pid: number; ppid: number; comm: string; nstid?: number }
  | { op: 'fork'; child: number }
  | { op: 'exec'; dirfd: number; path: string; argv: string[]; ret: number }
  | { op: 'exit'; code: number }
  | { op: 'rename_task'; name: string }
  | { op: 'open'; dirfd: number; path: string; flags: number; mode: number; ret: number }
  | { op: 'close'; fd: number }
  /** Descriptors closed, in order (the monitor sends the closes since a process's previous record at once). */
  | { op: 'closes'; fds: number[] }
  /**
   * Bytes written through an fd; `pid` when the writer is not the record's thread. `final`: the total
   * since the fd was made, reported as the fd is closed or replaced (the eBPF program sums in the
   * kernel); otherwise one call's bytes, summed by the decoder.
   */
  | { op: 'write'; fd: number; bytes: number; pid?: number; final?: boolean; data?: string }
  | { op: 'dup'; oldfd: number; newfd: number }
  | { op: 'pipe'; fds: [number, number]; socket: boolean }
  | { op: 'chdir'; dirfd: number; path: string; ret: number }
  | { op: 'rename'; fromDirfd: number; from: string; toDirfd: number; to: string; ret: number }
  | { op: 'unlink'; dirfd: number; path: string; directory: boolean; ret: number }
  | { op: 'mkdir'; dirfd: number; path: string; mode: number; ret: number }
  /** `path` '' means the object `dirfd` refers to itself (fchmod, fchown). */
  | { op: 'chmod'; dirfd: number; path: string; mode: number; ret: number }
  | { op: 'chown'; dirfd: number; path: string; uid: number; gid: number; ret: number }
  | { op: 'link'; target: string; targetDirfd: number; dirfd: number; path: string; symbolic: boolean; ret: number }
  | { op: 'socket'; family: number; type: number; protocol: number; ret: number }
  | { op: 'connect' | 'bind'; fd: number; address: SocketAddress | null; ret: number }
  /** `payload`: the first PAYLOAD_BYTES bytes sent or received, hex-encoded, when the tracer reads them. */
  | { op: 'send'; fd: number; address: SocketAddress | null; ret: number; payload?: string }
  | { op: 'recv'; fd: number; address: SocketAddress | null; ret: number; payload?: string }
  | { op: 'listen'; fd: number; ret: number }
  | { op: 'accept'; fd: number; ret: number }
  | { op: 'memfd'; name: string; ret: number }
  | { op: 'exec_map'; call: 'mmap' | 'mprotect'; address: bigint; length: number; prot: number; fd: number }
  | { op: 'ptrace'; request: number; target: number; ret: number }
  | { op: 'module'; call: string; fd: number; name: string; ret: number }
  | { op: 'setid'; call: string; ids: number[]; ret: number }
  | { op: 'kill'; target: number; signal: number; ret: number }
  /** nanosleep, clock_nanosleep (relative or absolute, as seconds from now), alarm, timerfd_settime, select/poll timeouts. */
  | { op: 'sleep'; seconds: number; ret: number }
  /**
   * Any other call decoded with its arguments (setsid, setpgid, prctl, capset, mount, umount2,
   * truncate, getdents64, fcntl, timerfd_create...): `api` in the header names it; argument names follow
   * the kernel's prototypes, numbers stay numbers, paths and strings are strings.
   */
  | { op: 'call'; args: Record<string, number | string>; ret: number }
  /**
   * How many times each system call (by name; the number as text when unnamed) was made by one process,
   * every call counted whether decoded or not, since its previous counts record (or since it was first
   * traced). Sent when the process executes a new program, when it exits and, for processes still
   * running, when tracing stops; a process's records add up.
   */
  | { op: 'counts'; pid: number; counts: Record<string, number> }
  /** Events the tracer itself had to drop. */
  | { op: 'lost'; count: number };

export type TraceRecord = RecordHeader & TraceOp;

/** Address families the event log names; anything else is written as its number. */
export function familyName(family: number): string {
  switch (family) {
    case 1:
      return 'unix';
    case 2:
      return 'inet';
    case 10:
      return 'inet6';
    case 16:
      return 'netlink';
    case 17:
      return 'packet';
    default:
      return String(family);
  }
}

/** The set*id calls in the order both tracers number them. */
export const SETID_CALLS = [
  'setuid',
  'setgid',
  'setreuid',
  'setregid',
  'setresuid',
  'setresgid',
  'setfsuid',
  'setfsgid',
] as const;
