import type { WindowsCallCategory } from './report-types.js';

/**
 * The raw behaviour log: `storage/analyses/<id>/logs/events.jsonl`, one JSON object per line, written
 * by the tracer while the sample runs and read (streamed) by the behaviour processing module.
 *
 * Process ids are the host's view of the sample's processes; every event of one analysis uses the same
 * numbering. `ts` is seconds since the epoch (float). `ret` is the system call's return value (negative
 * errno on failure) where the call returns one.
 */
export interface EventBase {
  ts: number;
  pid: number;
  ppid: number;
  tid: number;
  /** The thread's name (comm) when the event happened. */
  comm: string;
  /**
   * The system call the event comes from (`openat`, `dup2`, `sendto`...), when the tracer named it. Logs of
   * tracers that did not name calls lack it: readers then take `DEFAULT_API` of the kind.
   */
  api?: string;
  /** How many more times the same call was made right after this one (a folded loop); absent for one call. */
  repeated?: number;
}

export type BehaviorEvent = EventBase & EventBody;

export type EventBody =
  // Processes
  | { kind: 'process.fork'; child: number }
  | { kind: 'process.exec'; path: string; argv: string[]; ret: number }
  | { kind: 'process.exit'; code: number }
  /**
   * A thread first seen, with its id inside the machine's pid namespace (the id the machine's programs, and
   * Wine, know it by); only where that differs from `tid`. Not a call: it never appears among the calls.
   */
  | { kind: 'process.thread'; machineTid: number }
  /** prctl(PR_SET_NAME) or a write to /proc/self/comm: the process renamed itself. */
  | { kind: 'process.rename'; name: string }
  | { kind: 'process.ptrace'; request: number; target: number; ret: number }
  | { kind: 'process.setid'; call: string; ids: number[]; ret: number }
  | { kind: 'process.kill'; target: number; signal: number; ret: number }
  /**
   * nanosleep, clock_nanosleep, alarm, timerfd_settime...: how long the process asked to wait. `shortened`:
   * the sample supervisor answered the call at once (a sleep past its threshold); the tracer never saw it,
   * and processing puts it among the tracer's events from the supervisor's record.
   */
  | { kind: 'process.sleep'; seconds: number; ret: number; shortened?: true }
  /**
   * How many times the process made each system call (by name), every call counted, decoded or not; the
   * totals since it was first traced. Not a call itself: it never appears among the calls.
   */
  | { kind: 'process.counts'; counts: Record<string, number> }
  /**
   * A descriptor copied (dup, dup2, dup3, fcntl F_DUPFD): `newfd` now refers to what `oldfd` did, described
   * by `object` (and its path, or its socket's family and peer), so that a socket moved onto 0, 1 or 2 shows.
   */
  | {
      kind: 'file.dup';
      oldfd: number;
      newfd: number;
      object: 'file' | 'socket' | 'pipe' | 'memfd' | 'unknown';
      path?: string;
      family?: string;
      address?: string;
      port?: number;
      ret: number;
    }
  // Files: paths are as the sample saw them (absolute inside the machine when resolvable).
  | { kind: 'file.open'; path: string; flags: number; mode: number; ret: number }
  | { kind: 'file.write'; path: string; bytes: number }
  | { kind: 'file.rename'; from: string; to: string; ret: number }
  | { kind: 'file.delete'; path: string; ret: number }
  | { kind: 'file.mkdir'; path: string; mode: number; ret: number }
  | { kind: 'file.rmdir'; path: string; ret: number }
  | { kind: 'file.chmod'; path: string; mode: number; ret: number }
  | { kind: 'file.chown'; path: string; uid: number; gid: number; ret: number }
  | { kind: 'file.link'; from: string; to: string; symbolic: boolean; ret: number }
  // Network: family is 'inet', 'inet6', 'unix', 'netlink', 'packet' or the number as text.
  | { kind: 'net.socket'; family: string; type: number; protocol: number; ret: number }
  | { kind: 'net.connect'; fd: number; family: string; address: string; port: number; ret: number }
  | { kind: 'net.bind'; fd: number; family: string; address: string; port: number; ret: number }
  | { kind: 'net.listen'; fd: number; ret: number }
  | { kind: 'net.accept'; fd: number; ret: number }
  /**
   * `payload`: the first bytes sent or received (at most 256), hex-encoded, when the tracer read them; a send
   * without one may total several calls (writes summed until the socket was closed); `ret` only on a
   * send of one call.
   */
  | { kind: 'net.send'; fd: number; family?: string; address?: string; port?: number; bytes: number; payload?: string; ret?: number }
  | { kind: 'net.recv'; fd: number; family?: string; address?: string; port?: number; bytes: number; payload?: string; ret: number }
  // Memory and code
  | { kind: 'memory.memfd'; name: string; ret: number }
  | { kind: 'memory.exec_map'; call: 'mmap' | 'mprotect'; address: string; length: number; prot: number; path?: string }
  | { kind: 'module.load'; call: string; path?: string; ret: number }
  /**
   * Any other decoded call (setsid, setpgid, prctl, capset, mount, truncate, getdents64, fcntl,
   * timerfd_create...): `api` names it, `args` holds its arguments by the kernel's names.
   */
  | { kind: 'system.call'; args: Record<string, number | string>; ret: number }
  // Windows programs run under Wine
  /**
   * A Windows API call (relay-traced inside Wine): `api` names it as Windows does (`CreateFileW`), `module` is
   * its DLL in lower case (`kernel32`), `category` Cuckoo's category for it. `args` holds the arguments by
   * their documented names: strings as the program passed them (paths as Windows paths), handles, pointers
   * and flags as `0x...` text, plain counts as numbers. `ret` is the return value, `status` whether the call
   * succeeded by that API's own rule. `pid`/`ppid`/`tid` are the host's ids of the Wine process and thread
   * as in the rest of the log; `winpid`/`wintid` are the ids Windows code saw.
   */
  | {
      kind: 'win.call';
      module: string;
      category: WindowsCallCategory;
      args: Record<string, string | number>;
      ret: number;
      status: boolean;
      winpid: number;
      wintid: number;
    }
  // Windows guests: what Cuckoo's monitor reported besides calls (its logs/<pid>.bson)
  /**
   * A process the monitor began to watch (its `__process__` message): `comm` its program's name, `path` the
   * program's Windows path, `command_line` as Windows gave it, `modules` the modules loaded then (Cuckoo's
   * `basename`, `filepath`, `baseaddr`, `imgsize`), `track` whether the monitor follows its calls. `pid` and
   * `ppid` are the guest's own ids.
   */
  | {
      kind: 'win.process';
      path: string;
      command_line: string;
      is64bit: boolean;
      track: boolean;
      modules: Array<Record<string, string | number>>;
    }
  /**
   * An anomaly of a Windows guest's behaviour log, as Cuckoo's `behavior.anomaly` lists one: what the monitor
   * reported (`__anomaly__`: its hooks removed, an exception storm) or what processing found wrong in the log
   * (a document cut short or unreadable, calls it could not name).
   */
  | { kind: 'win.anomaly'; category: string; funcname: string; message: string }
  // The tracer itself: events it had to drop, so the report can say so.
  | { kind: 'tracer.lost'; count: number }
  | { kind: 'tracer.info'; tracer: string; message: string };

export type EventKind = EventBody['kind'];

export const EVENTS_FILE = 'logs/events.jsonl';
