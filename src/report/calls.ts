import type { BehaviorEvent, EventKind } from './events.js';
import { CALL_INDEX, type Indexed } from './event-log.js';
import type { Call } from './report-types.js';

/**
 * Behaviour events as Cuckoo's calls: named by the system call (`api`), with their arguments, return value,
 * success and category. The one conversion used by the behaviour section and by signature marks.
 */

type Named = (event: BehaviorEvent) => string;

/**
 * The call a kind most likely comes from, for events of tracers that did not name their calls (bpftrace,
 * logs from before names were recorded). Kinds that are no call (the tracer's notes, counts) have none.
 */
const DEFAULT_API: Partial<Record<EventKind, string | Named>> = {
  'process.fork': 'clone',
  'process.exec': 'execve',
  'process.exit': 'exit_group',
  'process.rename': 'prctl',
  'process.ptrace': 'ptrace',
  'process.setid': (event) => stringField(event, 'call', 'setuid'),
  'process.kill': 'kill',
  'process.sleep': 'nanosleep',
  'file.open': 'openat',
  'file.write': 'write',
  'file.rename': 'rename',
  'file.delete': 'unlink',
  'file.mkdir': 'mkdir',
  'file.rmdir': 'rmdir',
  'file.chmod': 'chmod',
  'file.chown': 'chown',
  'file.link': (event) => ((event as { symbolic?: unknown }).symbolic === true ? 'symlink' : 'link'),
  'file.dup': 'dup2',
  'net.socket': 'socket',
  'net.connect': 'connect',
  'net.bind': 'bind',
  'net.listen': 'listen',
  'net.accept': 'accept',
  'net.send': 'sendto',
  'net.recv': 'recvfrom',
  'memory.memfd': 'memfd_create',
  'memory.exec_map': (event) => stringField(event, 'call', 'mmap'),
  'module.load': (event) => stringField(event, 'call', 'init_module'),
  'system.call': 'syscall',
};

function stringField(event: BehaviorEvent, field: string, fallback: string): string {
  const value = (event as unknown as Record<string, unknown>)[field];
  return typeof value === 'string' && value !== '' ? value : fallback;
}

/** The system call an event stands for; undefined for events that are no call (tracer notes, counts). */
export function apiOf(event: BehaviorEvent): string | undefined {
  if (typeof event.api === 'string' && event.api !== '') return event.api;
  const named = DEFAULT_API[event.kind];
  return typeof named === 'function' ? named(event) : named;
}

/** Calls whose category their kind does not tell (the generic `system.call`, and a few others). */
const CATEGORY_BY_API: Record<string, Call['category']> = {
  setsid: 'process',
  setpgid: 'process',
  setpgrp: 'process',
  prctl: 'process',
  capset: 'process',
  unshare: 'process',
  setns: 'process',
  personality: 'process',
  truncate: 'file',
  ftruncate: 'file',
  getdents: 'file',
  getdents64: 'file',
  fcntl: 'file',
  flock: 'file',
  inotify_add_watch: 'file',
  nanosleep: 'synchronisation',
  clock_nanosleep: 'synchronisation',
  alarm: 'synchronisation',
  pause: 'synchronisation',
  timerfd_create: 'synchronisation',
  timerfd_settime: 'synchronisation',
  setitimer: 'synchronisation',
  mount: 'system',
  umount2: 'system',
  reboot: 'system',
};

const CATEGORY_BY_PREFIX: Record<string, Call['category']> = {
  process: 'process',
  file: 'file',
  net: 'network',
  memory: 'memory',
  module: 'system',
  system: 'system',
};

export function categoryOf(kind: string, api: string): Call['category'] {
  if (kind === 'process.sleep') return 'synchronisation';
  return CATEGORY_BY_API[api] ?? CATEGORY_BY_PREFIX[kind.slice(0, kind.indexOf('.'))] ?? 'system';
}

/** A behaviour event in Cuckoo's call shape (call it only for events apiOf names). */
export function callOf(event: BehaviorEvent): Call {
  if (event.kind === 'win.call') return windowsCallOf(event);
  const { [CALL_INDEX]: _index, ts, pid: _pid, ppid: _ppid, tid, comm: _comm, kind, api: _api, repeated, ...body } = event as Indexed;
  const { ret, payload, args, ...rest } = body as Record<string, unknown>;
  const api = apiOf(event) ?? kind;
  const returnValue = typeof ret === 'number' ? ret : 0;
  const named = kind === 'system.call' && isRecord(args) ? args : withoutCallName(rest, api);
  return {
    api,
    category: categoryOf(kind, api),
    time: ts,
    tid,
    status: returnValue >= 0,
    return_value: returnValue,
    arguments: typeof payload === 'string' ? { ...named, buffer: bufferText(payload) } : named,
    repeated: typeof repeated === 'number' && repeated > 0 ? repeated : 0,
  };
}

function windowsCallOf(event: Extract<BehaviorEvent, { kind: 'win.call' }>): Call {
  return {
    api: event.api ?? 'unknown',
    category: event.category,
    time: event.ts,
    tid: event.tid,
    status: event.status,
    return_value: event.ret,
    arguments: event.args,
    repeated: typeof event.repeated === 'number' && event.repeated > 0 ? event.repeated : 0,
  };
}

/** Some kinds say which call made them (`call: 'mprotect'`): that is the api already, not an argument. */
function withoutCallName(fields: Record<string, unknown>, api: string): Record<string, unknown> {
  if (fields.call !== api) return fields;
  const { call: _call, ...rest } = fields;
  return rest;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/**
 * Bytes as text the way Cuckoo shows a buffer: printable ASCII as it is, `\n` `\r` `\t` and `\\` escaped,
 * every other byte as `\xNN`. `hex` is the log's hex encoding; a malformed tail is left out.
 */
export function bufferText(hex: string): string {
  let text = '';
  for (let i = 0; i + 1 < hex.length; i += 2) {
    const byte = parseInt(hex.slice(i, i + 2), 16);
    if (Number.isNaN(byte)) break;
    text += byteText(byte);
  }
  return text;
}

function byteText(byte: number): string {
  switch (byte) {
    case 0x0a:
      return '\\n';
    case 0x0d:
      return '\\r';
    case 0x09:
      return '\\t';
    case 0x5c:
      return '\\\\';
    default:
      return byte >= 0x20 && byte < 0x7f ? String.fromCharCode(byte) : `\\x${byte.toString(16).padStart(2, '0')}`;
  }
}
