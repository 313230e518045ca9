import { Binary, deserialize } from 'bson';
import { bufferText } from './calls.js';
import type { BehaviorEvent } from './events.js';
import { documentedName, monitorCategory, monitorModule } from './monitor-apis.js';

/**
 * The behaviour log Cuckoo's Windows monitor writes for one process (`logs/<pid>.bson`), decoded one BSON
 * document at a time into the events a Wine task's calls give (`win.call`), plus the process itself
 * (`win.process`) and the monitor's anomalies (`win.anomaly`). The format, as Cuckoo 2.0.7's monitor writes
 * it and its host reads it:
 * - `{type: "info", I, name, category, args}` explains API number I before its first call: `args` names
 *   the values a call of it carries, in order, each a name or `[name, "p"|"x"]` (a pointer, or a value
 *   shown in hex). Every call's first two values are `is_success` and `retval`.
 * - a call is `{I, T, t, h, args}` (`e`/`E`, the last error and NTSTATUS, when it failed): T the thread,
 *   t milliseconds since the monitor started in the process, h a hash of the call.
 * - the special APIs: `__process__` (time_low/time_high, a FILETIME, then pid, ppid, module_path,
 *   command_line, is_64bit, track, modules), which starts a process's log; `__anomaly__` (tid,
 *   subcategory, function_name, message); `__thread__` of older monitors; `__action__`; and
 *   `__exception__`, `__missing__` and `__guardrw__`, which Cuckoo lists among the calls.
 * - `{type: "buffer"}` (a buffer too large for its call, which Cuckoo stores aside) and `{type: "debug"}`
 *   documents carry no call.
 */

export type MonitorEvent = Extract<BehaviorEvent, { kind: 'win.call' | 'win.process' | 'win.anomaly' }>;
type WindowsCall = Extract<BehaviorEvent, { kind: 'win.call' }>;
type Value = string | number;

interface ApiInfo {
  name: string;
  category: string | undefined;
  /** The values of a call by name, with `p` (pointer) or `x` (hex) when the monitor marked them. */
  args: Array<{ name: string; format?: string }>;
}

interface ProcessInfo {
  pid: number;
  ppid: number;
  name: string;
  /** The process's start as Unix seconds: calls are timed from it. */
  firstSeen: number;
  is64bit: boolean;
}

/** 100-ns intervals between 1601-01-01 (FILETIME's epoch) and 1970-01-01. */
const FILETIME_UNIX_EPOCH = 116444736000000000n;
/** A structure argument shown as JSON is cut here: a report is no place for a whole PEB. */
const MAX_STRUCTURE_TEXT = 4096;
/** Modules of one process kept in its entry. */
const MAX_MODULES = 1000;
/** Open files followed per process: a process that never closes its handles must not grow this without end. */
const MAX_OPEN_FILES = 65536;

export class MonitorLogDecoder {
  readonly #apis = new Map<number, ApiInfo>();
  #process: ProcessInfo | undefined;
  /** Files the process opened, by handle, for the reads that name only the handle (Cuckoo does the same). */
  readonly #files = new Map<string, string>();
  /** Calls that could not be named: an API number no info explained, or values not matching its names. */
  unnamed = 0;
  /** Calls before the process's own message: they have no time and no process to belong to. */
  unplaced = 0;

  /** `pid` is the guest pid the log's name gives, until its `__process__` message tells. */
  constructor(private readonly pid: number) {}

  /** The process the log is of, once its `__process__` message came. */
  get process(): Readonly<ProcessInfo> | undefined {
    return this.#process;
  }

  /** The events one document gives (none for most documents but calls). Throws on a document that is no BSON. */
  document(bytes: Uint8Array): MonitorEvent[] {
    const document = deserialize(bytes, { useBigInt64: true, promoteBuffers: false, validation: { utf8: false } });
    if (document.type === 'info') {
      this.#explain(document);
      return [];
    }
    if (document.type !== undefined && document.type !== 'none') return [];
    const info = this.#apis.get(Number(document.I));
    const values = Array.isArray(document.args) ? (document.args as unknown[]) : [];
    if (!info || values.length !== info.args.length) {
      this.unnamed++;
      return [];
    }
    return this.#message(info, values, document);
  }

  #explain(document: Record<string, unknown>): void {
    const args = (Array.isArray(document.args) ? (document.args as unknown[]) : []).map((arg) =>
      Array.isArray(arg) ? { name: String(arg[0]), format: typeof arg[1] === 'string' ? arg[1] : undefined } : { name: String(arg) },
    );
    const category = typeof document.category === 'string' ? document.category : undefined;
    this.#apis.set(Number(document.I), { name: String(document.name ?? 'unknown'), category, args });
  }

  #message(info: ApiInfo, values: unknown[], document: Record<string, unknown>): MonitorEvent[] {
    const named = new Map(info.args.map((arg, i) => [arg.name, values[i]]));
    switch (info.name) {
      case '__process__':
        return [this.#started(named)];
      case '__thread__':
      case '__action__':
        // Older monitors' thread notes and the analyzer's feedback: no behaviour of the process.
        return [];
      case '__anomaly__':
        return this.#process ? [this.#anomaly(named, document)] : [];
      default:
        return this.#call(info, values, document);
    }
  }

  #started(named: Map<string, unknown>): MonitorEvent {
    // Cuckoo reads both spellings: this monitor's, and the older one's.
    const value = (...names: string[]) => named.get(names.find((name) => named.has(name)) ?? '');
    const low = BigInt.asUintN(32, BigInt(integer(value('time_low', 'TimeLow'))));
    const high = BigInt.asUintN(32, BigInt(integer(value('time_high', 'TimeHigh'))));
    const filetime = (high << 32n) | low;
    const firstSeen = Number(filetime - FILETIME_UNIX_EPOCH) / 1e7;
    const path = text(value('module_path', 'ModulePath'));
    const process: ProcessInfo = {
      pid: integer(value('pid', 'process_identifier', 'ProcessIdentifier')) || this.pid,
      ppid: integer(value('ppid', 'parent_process_identifier', 'ParentProcessIdentifier')),
      name: path.slice(path.lastIndexOf('\\') + 1),
      firstSeen,
      is64bit: integer(value('is_64bit')) !== 0,
    };
    this.#process = process;
    return {
      kind: 'win.process',
      ts: firstSeen,
      pid: process.pid,
      ppid: process.ppid,
      tid: 0,
      comm: process.name,
      path,
      command_line: text(value('command_line')),
      is64bit: process.is64bit,
      track: !named.has('track') || integer(named.get('track')) !== 0,
      modules: modulesOf(value('modules')),
    };
  }

  #anomaly(named: Map<string, unknown>, document: Record<string, unknown>): MonitorEvent {
    const process = this.#process!;
    return {
      kind: 'win.anomaly',
      ts: this.#timeOf(document),
      pid: process.pid,
      ppid: process.ppid,
      tid: integer(named.get('tid')),
      comm: process.name,
      category: text(named.get('subcategory')),
      funcname: text(named.get('function_name')),
      message: text(named.get('message')),
    };
  }

  #call(info: ApiInfo, values: unknown[], document: Record<string, unknown>): MonitorEvent[] {
    const process = this.#process;
    if (!process) {
      this.unplaced++;
      return [];
    }
    const args: Record<string, Value> = {};
    let status = true;
    let ret = 0;
    info.args.forEach((arg, i) => {
      const value = values[i];
      if (i === 0 && arg.name === 'is_success') status = integer(value) !== 0;
      // A 32-bit process's return value comes as an unsigned 32-bit long: signed, as a Wine task's is.
      else if (i === 1 && arg.name === 'retval') ret = process.is64bit ? integer(value) : integer(value) | 0;
      else this.#argument(args, info.name, arg, value, process.is64bit);
    });
    const tid = integer(document.T);
    const call: WindowsCall = {
      kind: 'win.call',
      ts: this.#timeOf(document),
      pid: process.pid,
      ppid: process.ppid,
      tid,
      comm: process.name,
      api: info.name,
      module: monitorModule(info.name),
      category: monitorCategory(info.name, info.category),
      args,
      ret,
      status,
      winpid: process.pid,
      wintid: tid,
    };
    this.#followFiles(call);
    return [call];
  }

  #argument(args: Record<string, Value>, api: string, arg: ApiInfo['args'][number], value: unknown, is64bit: boolean): void {
    const documented = documentedName(api, arg.name);
    if (documented === undefined) {
      args[arg.name] = cuckooValue(value, arg.format, is64bit);
      return;
    }
    const count = documented.startsWith('#');
    const name = count ? documented.slice(1) : documented;
    // A documented handle, pointer or flag is hex text, as a Wine task's; a count stays a number.
    const wide = is64bit && arg.format === 'p';
    args[name] = !count && isInteger(value) ? hexText(value, wide) : cuckooValue(value, count ? undefined : arg.format, is64bit);
  }

  /** `filepath` for calls on a file handle, from the open that gave the handle (until NtClose closes it). */
  #followFiles(call: WindowsCall): void {
    if (call.api === 'NtClose' && typeof call.args.handle === 'string') this.#files.delete(call.args.handle);
    const handle = typeof call.args.FileHandle === 'string' ? call.args.FileHandle : undefined;
    if (handle === undefined) return;
    if ((call.api === 'NtCreateFile' || call.api === 'NtOpenFile') && call.status && typeof call.args.filepath === 'string') {
      if (this.#files.size >= MAX_OPEN_FILES) this.#files.delete(this.#files.keys().next().value!);
      this.#files.set(handle, call.args.filepath);
    } else if (call.args.filepath === undefined && this.#files.has(handle)) {
      call.args.filepath = this.#files.get(handle)!;
    }
  }

  #timeOf(document: Record<string, unknown>): number {
    return Math.round((this.#process!.firstSeen + integer(document.t) / 1000) * 1e6) / 1e6;
  }
}

/** A value as Cuckoo shows it: pointers as `0x` and 8 or 16 hex digits, buffers as text, numbers as numbers. */
function cuckooValue(value: unknown, format: string | undefined, is64bit: boolean): Value {
  if (isInteger(value) && (format === 'p' || format === 'x')) return hexText(value, format === 'p' && is64bit);
  if (typeof value === 'bigint') return Number(value);
  // Cuckoo shows a 32-bit process's negative values as the unsigned numbers they also are.
  if (typeof value === 'number' && !is64bit && Number.isInteger(value) && value < 0) return value >>> 0;
  if (typeof value === 'number' || typeof value === 'string') return value;
  if (typeof value === 'boolean') return value ? 1 : 0;
  if (value instanceof Binary) return bufferText(Buffer.from(value.buffer).toString('hex'));
  if (value === null || value === undefined) return '';
  return structureText(value);
}

function hexText(value: number | bigint, wide: boolean): string {
  const bits = wide ? 64 : 32;
  return `0x${BigInt.asUintN(bits, BigInt(value)).toString(16).padStart(bits / 4, '0')}`;
}

/** A structure (an exception record, a list of strings) as JSON text, cut to a bounded length. */
function structureText(value: unknown): string {
  const json = JSON.stringify(value, (_key, inner: unknown) => (typeof inner === 'bigint' ? Number(inner) : inner instanceof Binary ? bufferText(Buffer.from(inner.buffer).toString('hex')) : inner));
  return json.length > MAX_STRUCTURE_TEXT ? `${json.slice(0, MAX_STRUCTURE_TEXT)}...` : json;
}

function isInteger(value: unknown): value is number | bigint {
  return typeof value === 'bigint' || (typeof value === 'number' && Number.isInteger(value));
}

/** An integer value (int32 or int64 in the log) as a number; 0 for anything else. */
function integer(value: unknown): number {
  if (typeof value === 'bigint') return Number(BigInt.asIntN(64, value));
  return typeof value === 'number' && Number.isFinite(value) ? Math.trunc(value) : 0;
}

function text(value: unknown): string {
  if (typeof value === 'string') return value;
  if (value instanceof Binary) return Buffer.from(value.buffer).toString('latin1');
  return '';
}

/** The modules the process had loaded, as the monitor listed them (basename, filepath, baseaddr, imgsize). */
function modulesOf(value: unknown): Array<Record<string, string | number>> {
  if (!Array.isArray(value)) return [];
  return value.slice(0, MAX_MODULES).flatMap((module: unknown) => {
    if (typeof module !== 'object' || module === null) return [];
    const fields = Object.entries(module as Record<string, unknown>).flatMap(([key, inner]) => (isInteger(inner) ? [[key, Number(inner)]] : typeof inner === 'string' ? [[key, inner]] : []));
    return [Object.fromEntries(fields) as Record<string, string | number>];
  });
}
