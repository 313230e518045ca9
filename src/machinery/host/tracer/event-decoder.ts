import { posix } from 'node:path';
import type { BehaviorEvent, EventBase, EventBody } from '../../../report/events.js';
import { FdTable, type FdEntry } from './fd-table.js';
import { AT_FDCWD, familyName, type SocketAddress, type TraceRecord } from './trace-records.js';

export interface DecoderOptions {
  /**
   * The current directory of a process first seen without its parent (the sample's first process),
   * as the process sees it; null when unknown (relative paths then stay relative).
   */
  cwdOf?: (pid: number) => string | null;
}

interface Thread {
  pid: number;
  comm: string;
  /** Its id inside the machine's pid namespace, once told. */
  machineTid?: number;
}

/** Where an event happened: the record's time and thread, and the system call when the tracer named it. */
interface At {
  ts: number;
  tid: number;
  api?: string;
  repeated?: number;
}

interface Process {
  ppid: number;
  fds: FdTable;
  cwd: string | null;
  /** Bytes written per fd since it was opened, reported when the fd is closed or reused, or at exit. */
  written: Map<number, { bytes: number; entry: FdEntry | undefined }>;
}

/** `/dev/fd/N`, `/proc/self/fd/N`, `/proc/<pid>/fd/N`: a path naming one of the process's descriptors. */
const FD_PATH = /^\/(?:dev\/fd|proc\/(?:self|thread-self|\d+)\/fd)\/(\d+)$/;
const COMM_PATH = /^\/proc\/(?:self|thread-self|\d+)(?:\/task\/\d+)?\/comm$/;

/**
 * Turns system-call records, in time order, into behaviour events: tracks which process each thread
 * belongs to, every process's descriptors and current directory (to name the files behind fds and
 * make relative paths absolute), and totals writes per descriptor instead of reporting each one. Each
 * event carries the system call's name (`api`) when the record did.
 */
export class EventDecoder {
  private readonly threads = new Map<number, Thread>();
  private readonly processes = new Map<number, Process>();

  constructor(
    private readonly emit: (event: BehaviorEvent) => void,
    private readonly options: DecoderOptions = {},
  ) {}

  record(r: TraceRecord): void {
    switch (r.op) {
      case 'identity':
        this.identify(r.tid, r.pid, r.ppid, r.comm);
        if (r.nstid !== undefined) this.machineTid(r, r.nstid);
        return;
      case 'fork': {
        const parent = this.processOf(r.tid);
        this.processes.set(r.child, { ppid: this.pidOf(r.tid), fds: parent.fds.copy(), cwd: parent.cwd, written: new Map() });
        this.threads.set(r.child, { pid: r.child, comm: this.threads.get(r.tid)?.comm ?? '' });
        this.event(r, { kind: 'process.fork', child: r.child });
        return;
      }
      case 'exec':
        this.event(r, { kind: 'process.exec', path: this.execPath(r.tid, r.dirfd, r.path), argv: r.argv, ret: r.ret });
        return;
      case 'exit': {
        const pid = this.pidOf(r.tid);
        this.flushAll(r, pid);
        this.event(r, { kind: 'process.exit', code: r.code });
        return;
      }
      case 'rename_task':
        this.event(r, { kind: 'process.rename', name: r.name });
        this.thread(r.tid).comm = r.name;
        return;
      case 'open': {
        const path = this.resolve(r.tid, r.dirfd, r.path);
        if (r.ret >= 0) this.newFd(r, r.ret, { kind: 'file', path });
        this.event(r, { kind: 'file.open', path, flags: r.flags, mode: r.mode, ret: r.ret });
        return;
      }
      case 'close':
        this.close(r, r.fd);
        return;
      case 'closes':
        for (const fd of r.fds) this.close(r, fd);
        return;
      case 'write': {
        const pid = r.pid ?? this.pidOf(r.tid);
        this.write(r, pid, r.fd, r.bytes, r.data);
        if (r.final) this.flush(r, pid, r.fd);
        return;
      }
      case 'dup':
        this.dup(r, r.oldfd, r.newfd);
        return;
      case 'pipe':
        for (const fd of r.fds) {
          this.newFd(r, fd, r.socket ? { kind: 'socket', path: '', family: 'unix' } : { kind: 'pipe', path: '' });
        }
        return;
      case 'chdir':
        if (r.ret === 0) this.processOf(r.tid).cwd = this.resolve(r.tid, r.dirfd, r.path);
        return;
      case 'rename':
        this.event(r, {
          kind: 'file.rename',
          from: this.resolve(r.tid, r.fromDirfd, r.from),
          to: this.resolve(r.tid, r.toDirfd, r.to),
          ret: r.ret,
        });
        return;
      case 'unlink': {
        const path = this.resolve(r.tid, r.dirfd, r.path);
        this.event(r, r.directory ? { kind: 'file.rmdir', path, ret: r.ret } : { kind: 'file.delete', path, ret: r.ret });
        return;
      }
      case 'mkdir':
        this.event(r, { kind: 'file.mkdir', path: this.resolve(r.tid, r.dirfd, r.path), mode: r.mode, ret: r.ret });
        return;
      case 'chmod':
        this.event(r, { kind: 'file.chmod', path: this.resolve(r.tid, r.dirfd, r.path), mode: r.mode, ret: r.ret });
        return;
      case 'chown':
        this.event(r, { kind: 'file.chown', path: this.resolve(r.tid, r.dirfd, r.path), uid: r.uid, gid: r.gid, ret: r.ret });
        return;
      case 'link':
        this.event(r, {
          kind: 'file.link',
          // A symlink's target is stored as written; a hard link's names an existing file.
          from: r.symbolic ? r.target : this.resolve(r.tid, r.targetDirfd, r.target),
          to: this.resolve(r.tid, r.dirfd, r.path),
          symbolic: r.symbolic,
          ret: r.ret,
        });
        return;
      case 'socket': {
        const family = familyName(r.family);
        if (r.ret >= 0) this.newFd(r, r.ret, { kind: 'socket', path: '', family });
        this.event(r, { kind: 'net.socket', family, type: r.type, protocol: r.protocol, ret: r.ret });
        return;
      }
      case 'connect':
      case 'bind': {
        const entry = this.processOf(r.tid).fds.get(r.fd);
        const address = r.address ?? { family: entry?.family ?? '', address: '', port: 0 };
        if (r.op === 'connect' && r.address && entry?.kind === 'socket') entry.peer = r.address;
        this.event(r, { kind: r.op === 'connect' ? 'net.connect' : 'net.bind', fd: r.fd, ...address, ret: r.ret });
        return;
      }
      case 'send':
      case 'recv':
        this.event(r, {
          kind: r.op === 'send' ? 'net.send' : 'net.recv',
          fd: r.fd,
          ...this.peerOf(r.tid, r.fd, r.address),
          bytes: Math.max(r.ret, 0),
          ...payloadOf(r.payload),
          ret: r.ret,
        });
        return;
      case 'listen':
        this.event(r, { kind: 'net.listen', fd: r.fd, ret: r.ret });
        return;
      case 'accept': {
        const listening = this.processOf(r.tid).fds.get(r.fd);
        if (r.ret >= 0) this.newFd(r, r.ret, { kind: 'socket', path: '', family: listening?.family ?? '' });
        this.event(r, { kind: 'net.accept', fd: r.fd, ret: r.ret });
        return;
      }
      case 'memfd':
        if (r.ret >= 0) this.newFd(r, r.ret, { kind: 'memfd', path: `memfd:${r.name}` });
        this.event(r, { kind: 'memory.memfd', name: r.name, ret: r.ret });
        return;
      case 'exec_map': {
        const path = r.fd >= 0 ? this.processOf(r.tid).fds.get(r.fd)?.path : undefined;
        this.event(r, {
          kind: 'memory.exec_map',
          call: r.call,
          address: `0x${r.address.toString(16)}`,
          length: r.length,
          prot: r.prot,
          ...(path ? { path } : {}),
        });
        return;
      }
      case 'ptrace':
        this.event(r, { kind: 'process.ptrace', request: r.request, target: r.target, ret: r.ret });
        return;
      case 'module': {
        const path = r.call === 'finit_module' ? this.processOf(r.tid).fds.get(r.fd)?.path : r.name || undefined;
        this.event(r, { kind: 'module.load', call: r.call, ...(path ? { path } : {}), ret: r.ret });
        return;
      }
      case 'setid':
        this.event(r, { kind: 'process.setid', call: r.call, ids: r.ids, ret: r.ret });
        return;
      case 'kill':
        this.event(r, { kind: 'process.kill', target: r.target, signal: r.signal, ret: r.ret });
        return;
      case 'sleep':
        this.event(r, { kind: 'process.sleep', seconds: r.seconds, ret: r.ret });
        return;
      case 'call':
        this.event(r, { kind: 'system.call', args: r.args, ret: r.ret });
        return;
      case 'counts':
        this.counts(r.ts, r.pid, r.counts);
        return;
      case 'lost':
        this.event(r, { kind: 'tracer.lost', count: r.count });
        return;
    }
  }

  /** The trace has ended: reports the writes no close or exit reported. */
  finish(ts: number): void {
    for (const pid of this.processes.keys()) this.flushAll({ ts, tid: pid }, pid);
  }

  /** A thread named '' (the strace fallback knows no names) keeps its name, or takes its process's. */
  private identify(tid: number, pid: number, ppid: number, comm: string): void {
    const name = comm || this.threads.get(tid)?.comm || this.threads.get(pid)?.comm || '';
    const machineTid = this.threads.get(tid)?.machineTid;
    this.threads.set(tid, { pid, comm: name, ...(machineTid === undefined ? {} : { machineTid }) });
    if (!this.processes.has(pid)) {
      const cwd = this.options.cwdOf?.(pid) ?? null;
      this.processes.set(pid, { ppid, fds: new FdTable(), cwd, written: new Map() });
    }
  }

  /** Tells the thread's id inside the machine once (an exec names the thread again, with the same id). */
  private machineTid(r: At, machineTid: number): void {
    const thread = this.thread(r.tid);
    if (thread.machineTid === machineTid || machineTid === r.tid) return;
    thread.machineTid = machineTid;
    this.event(r, { kind: 'process.thread', machineTid });
  }

  private thread(tid: number): Thread {
    let thread = this.threads.get(tid);
    if (!thread) {
      thread = { pid: tid, comm: '' };
      this.threads.set(tid, thread);
    }
    return thread;
  }

  private pidOf(tid: number): number {
    return this.thread(tid).pid;
  }

  private processOf(tid: number): Process {
    const pid = this.pidOf(tid);
    let process = this.processes.get(pid);
    if (!process) {
      process = { ppid: 0, fds: new FdTable(), cwd: null, written: new Map() };
      this.processes.set(pid, process);
    }
    return process;
  }

  private header(r: At): EventBase {
    const thread = this.thread(r.tid);
    const header: EventBase = { ts: r.ts, pid: thread.pid, ppid: this.processes.get(thread.pid)?.ppid ?? 0, tid: r.tid, comm: thread.comm };
    if (r.api !== undefined) header.api = r.api;
    if (r.repeated) header.repeated = r.repeated;
    return header;
  }

  private event(r: At, body: EventBody): void {
    this.emit(Object.assign(this.header(r), body) as BehaviorEvent);
  }

  /** The tracer's call counts of one process, which may not be the thread the record came from. */
  private counts(ts: number, pid: number, counts: Record<string, number>): void {
    const comm = this.threads.get(pid)?.comm ?? '';
    this.emit({ ts, pid, ppid: this.processes.get(pid)?.ppid ?? 0, tid: pid, comm, kind: 'process.counts', counts });
  }

  /** The address a send or receive names, or else the peer its socket was connected to. */
  private peerOf(tid: number, fd: number, address: SocketAddress | null): SocketAddress | Record<string, never> {
    return address ?? this.processOf(tid).fds.get(fd)?.peer ?? {};
  }

  private close(r: At, fd: number): void {
    this.flush(r, this.pidOf(r.tid), fd);
    this.processOf(r.tid).fds.close(fd);
  }

  /** A descriptor copied: the event says what the old one was, so a socket moved onto stdin shows as one. */
  private dup(r: At, oldfd: number, newfd: number): void {
    const process = this.processOf(r.tid);
    const entry = process.fds.get(oldfd);
    this.flush(r, this.pidOf(r.tid), newfd);
    process.fds.dup(oldfd, newfd);
    const object = entry?.kind ?? 'unknown';
    const detail = entry?.kind === 'socket' ? { family: entry.family ?? '', ...(entry.peer ?? {}) } : entry?.path ? { path: entry.path } : {};
    this.event(r, { kind: 'file.dup', oldfd, newfd, object, ...detail, ret: newfd });
  }

  private newFd(r: { ts: number; tid: number }, fd: number, entry: FdEntry): void {
    this.flush(r, this.pidOf(r.tid), fd);
    this.processOf(r.tid).fds.set(fd, entry);
  }

  private write(r: { ts: number; tid: number }, pid: number, fd: number, bytes: number, data: string | undefined): void {
    const process = this.processes.get(pid) ?? this.processOf(r.tid);
    const entry = process.fds.get(fd);
    if (data !== undefined && entry && COMM_PATH.test(entry.path)) {
      this.event(r, { kind: 'process.rename', name: data.replace(/\n$/, '').slice(0, 15) });
    }
    const total = process.written.get(fd);
    if (total) total.bytes += bytes;
    else process.written.set(fd, { bytes, entry });
  }

  private flushAll(r: { ts: number; tid: number }, pid: number): void {
    const process = this.processes.get(pid);
    if (!process) return;
    for (const fd of [...process.written.keys()]) this.flush(r, pid, fd);
  }

  /** Reports the writes through `fd` of process `pid`: pipes are plumbing, not behaviour, and are left out. */
  private flush(r: { ts: number; tid: number }, pid: number, fd: number): void {
    const process = this.processes.get(pid);
    const total = process?.written.get(fd);
    if (!process || !total) return;
    process.written.delete(fd);
    const entry = total.entry;
    // A total of several calls: named after the call that made it, whatever ended it.
    const at = { ts: r.ts, tid: this.threads.get(r.tid)?.pid === pid ? r.tid : pid, api: 'write' };
    if (entry?.kind === 'pipe') return;
    if (entry?.kind === 'socket') {
      this.event(at, { kind: 'net.send', fd, ...(entry.peer ?? {}), bytes: total.bytes });
      return;
    }
    this.event(at, { kind: 'file.write', path: entry?.path ?? `fd:${fd}`, bytes: total.bytes });
  }

  private resolve(tid: number, dirfd: number, path: string): string {
    const process = this.processOf(tid);
    if (path.startsWith('/')) return path;
    const base = dirfd === AT_FDCWD ? process.cwd : (process.fds.get(dirfd)?.path ?? null);
    if (path === '') return base ?? '';
    if (!base) return path;
    // The common case (a name in a directory, as find walks a tree) without path.join's normalising.
    return isName(path) && isNormalAbsolute(base) ? `${base === '/' ? '' : base}/${path}` : posix.join(base, path);
  }

  /** A program run from one of the process's descriptors (fexecve) is named by what the descriptor is. */
  private execPath(tid: number, dirfd: number, path: string): string {
    const fd = FD_PATH.exec(path);
    const entry = fd ? this.processOf(tid).fds.get(Number(fd[1])) : undefined;
    if (entry?.path) return entry.path;
    return this.resolve(tid, dirfd, path);
  }
}

/** A file's name: no separator, and not `.` or `..`. */
function isName(path: string): boolean {
  return path !== '.' && path !== '..' && !path.includes('/');
}

/** An absolute path that path.join() would leave as it is: no empty, `.` or `..` part, no trailing slash. */
function isNormalAbsolute(path: string): boolean {
  if (path === '/') return true;
  return (
    path.startsWith('/') &&
    !path.endsWith('/') &&
    !path.includes('//') &&
    !path.includes('/./') &&
    !path.includes('/../') &&
    !path.endsWith('/.') &&
    !path.endsWith('/..')
  );
}

function payloadOf(payload: string | undefined): { payload?: string } {
  return payload === undefined ? {} : { payload };
}
