import type { BehaviorEvent } from './events.js';
import { type SuccessRule, windowsApi } from './windows-apis.js';
import { joinKey, RegistryKeys } from './wine-registry-keys.js';
import { normalHandle, parseRelayLine, type RelayArg, type RelayLine } from './wine-relay-line.js';

/**
 * Wine's relay output, line by line, as Windows API calls (`win.call` events). A call is complete when its
 * `Ret` line comes (relay prints the return value only there), and that is its time, as for the system
 * calls the monitor logs when they return; so the calls come out in time order. A call that never
 * returned has the time of its `Call` line.
 * The events carry Wine's ids and ticks: the stream that reads the file gives them host ids and times.
 * Besides the arguments relay shows, calls get what Cuckoo's monitor adds: `regkey` (the full registry
 * path, from the key handles `+reg` shows), `filepath` for reads and writes of a file opened before; and
 * ShellExecuteEx gets its SHELLEXECUTEINFO's file, parameters and verb from `+exec`, and each ShellExecute*
 * call the Wine pid of the process it started as `process_identifier`.
 */

export type WindowsCall = Extract<BehaviorEvent, { kind: 'win.call' }>;

interface Frame {
  api: string;
  module: string;
  tick: number;
  args: RelayArg[];
  /** The last key handle `+reg` showed this thread given during the call, with its path. */
  keyHandle?: { handle: string; path: string | undefined };
  /** For ShellExecuteEx: the SHELLEXECUTEINFO members `+exec` showed, which relay gives only a pointer to. */
  shellInfo?: Record<string, string>;
  /** For ShellExecute*: the Wine pid of the process it started (`+process`). */
  started?: number;
}

interface WineProcess {
  keys: RegistryKeys;
  files: Map<string, string>;
  /** Process and thread handles it holds, to the Wine pid of the process they designate. */
  targets: Map<string, number>;
  threads: Map<number, Frame[]>;
  /** The program's name (`x.exe`), from Wine's Image File Execution Options lookup at its start. */
  image?: string;
}

const IFEO = /\\Image File Execution Options\\([^\\]+)$/i;
const KEY_OPENERS = /^Reg(Create|Open)Key(Ex)?[AW]$/;
const VALUE_CALLS = /^Reg(SetValueEx|QueryValueEx|DeleteValue)[AW]$/;
const KEY_CALLS = /^Reg(DeleteKey(Ex)?[AW]|DeleteTreeW|EnumKeyExW|EnumValueW|CloseKey)$/;
const CREATE_DISPOSITIONS = new Set([1, 2, 4]);
const SHELL_EXECUTE = /^ShellExecute(Ex)?[AW]$/;

/**
 * Calls waiting for their return, at most, across all threads. The program itself can write well-formed
 * relay lines (Wine's debug output and the program share the process's Unix stderr, and ntdll exports the
 * functions that print them): a flood of `Call` lines that never return must not hold gigabytes in
 * processing. A real program waits in far fewer traced calls at once (one per thread, a few deep).
 */
export const MAX_OPEN_CALLS = 10_000;

export class RelayDecoder {
  readonly #processes = new Map<number, WineProcess>();
  /** Images of processes a traced process created (`+process`), by Wine pid. */
  readonly #created = new Map<number, { image: string; parent: number }>();
  /** Calls waiting for their return, oldest first, with where they wait. */
  readonly #open = new Map<Frame, { process: WineProcess; winpid: number; wintid: number }>();

  /** The calls a line completes (none for most lines). */
  line(text: string): WindowsCall[] {
    const line = parseRelayLine(text);
    if (!line) return [];
    const process = this.#process(line.winpid);
    switch (line.kind) {
      case 'call':
        return this.#called(process, line, { api: line.api, module: line.module, tick: line.tick, args: line.args });
      case 'ret':
        return this.#returned(process, line, line.api, line.retval);
      case 'key-request': {
        process.keys.request(line.wintid, line.root, line.name);
        const image = IFEO.exec(joinKey(process.keys.pathOf(line.root) ?? '', line.name));
        if (image && process.image === undefined) process.image = image[1];
        return [];
      }
      case 'key-handle': {
        const path = process.keys.given(line.wintid, line.handle);
        const frame = this.#frames(process, line.wintid).at(-1);
        if (frame && line.handle !== undefined) frame.keyHandle = { handle: line.handle, path };
        return [];
      }
      case 'process-created': {
        this.#created.set(line.childWinpid, { image: line.image, parent: line.winpid });
        process.targets.set(line.processHandle, line.childWinpid);
        process.targets.set(line.threadHandle, line.childWinpid);
        const frame = this.#frames(process, line.wintid).at(-1);
        if (frame && SHELL_EXECUTE.test(frame.api)) frame.started ??= line.childWinpid;
        return [];
      }
      case 'shell-execute': {
        const frame = this.#frames(process, line.wintid).at(-1);
        if (frame && /^ShellExecuteEx[AW]$/.test(frame.api)) frame.shellInfo ??= shellInfoOf(line);
        return [];
      }
      default:
        return [];
    }
  }

  /** Calls still waiting for their return when the log ended (ExitProcess, a call cut short by the end). */
  unfinished(): WindowsCall[] {
    const calls: WindowsCall[] = [];
    for (const [winpid, process] of this.#processes) {
      for (const [wintid, frames] of process.threads) for (const frame of frames) calls.push(this.#call(process, winpid, wintid, frame, undefined));
    }
    return calls.sort((a, b) => a.ts - b.ts);
  }

  /** The program a Wine process runs: the path its creator gave, else its file name. */
  imageOf(winpid: number): string | undefined {
    return this.#created.get(winpid)?.image ?? this.#processes.get(winpid)?.image;
  }

  /** The Wine pid of the traced process that created this one. */
  creatorOf(winpid: number): number | undefined {
    return this.#created.get(winpid)?.parent;
  }

  #process(winpid: number): WineProcess {
    let process = this.#processes.get(winpid);
    if (!process) {
      process = { keys: new RegistryKeys(), files: new Map(), targets: new Map(), threads: new Map() };
      this.#processes.set(winpid, process);
    }
    return process;
  }

  #frames(process: WineProcess, wintid: number): Frame[] {
    let frames = process.threads.get(wintid);
    if (!frames) {
      frames = [];
      process.threads.set(wintid, frames);
    }
    return frames;
  }

  /** A call begins; beyond MAX_OPEN_CALLS waiting ones, the oldest is given up as one that never returned. */
  #called(process: WineProcess, { winpid, wintid }: RelayLine, frame: Frame): WindowsCall[] {
    this.#frames(process, wintid).push(frame);
    this.#open.set(frame, { process, winpid, wintid });
    const [oldest] = this.#open;
    if (this.#open.size <= MAX_OPEN_CALLS || !oldest) return [];
    const [given, where] = oldest;
    this.#open.delete(given);
    const frames = this.#frames(where.process, where.wintid);
    frames.splice(frames.indexOf(given), 1);
    if (frames.length === 0) where.process.threads.delete(where.wintid);
    return [this.#call(where.process, where.winpid, where.wintid, given, undefined)];
  }

  #returned(process: WineProcess, { winpid, wintid, tick }: RelayLine, api: string, retval: string): WindowsCall[] {
    const frames = this.#frames(process, wintid);
    const at = frames.findLastIndex((frame) => frame.api === api);
    if (at < 0) return [];
    // Calls above it in the thread never returned (a callback left by longjmp or an exception).
    const [frame, ...abandoned] = frames.splice(at);
    for (const done of [frame!, ...abandoned]) this.#open.delete(done);
    const calls = abandoned.map((other) => this.#call(process, winpid, wintid, other, undefined));
    calls.unshift({ ...this.#call(process, winpid, wintid, frame!, retval), ts: tick });
    return calls;
  }

  #call(process: WineProcess, winpid: number, wintid: number, frame: Frame, retval: string | undefined): WindowsCall {
    const known = windowsApi(frame.api);
    const ret = retval === undefined ? 0 : signedValue(retval);
    const rule = known?.success ?? 'nonzero';
    // A call that never returned succeeded only if it cannot fail (ExitProcess).
    const status = retval === undefined ? rule === 'always' : succeeded(rule, ret);
    const args = { ...namedArgs(frame.args, known?.args ?? []), ...frame.shellInfo };
    if (frame.started !== undefined) args.process_identifier = frame.started;
    if (status || retval === undefined) addHandles(process, frame, args, retval);
    else addPaths(process, frame, args);
    addTarget(process, winpid, args);
    return {
      ts: frame.tick,
      pid: 0,
      ppid: 0,
      tid: 0,
      comm: '',
      api: frame.api,
      kind: 'win.call',
      module: known?.module ?? frame.module.toLowerCase(),
      category: known?.category ?? 'misc',
      args,
      ret,
      status,
      winpid,
      wintid,
    };
  }
}

/**
 * ShellExecuteEx's SHELLEXECUTEINFO as arguments named by its members (lpFile, lpParameters as
 * ShellExecute's arguments are), a NULL string as `0x0` the way relay shows a NULL pointer.
 */
function shellInfoOf(line: Extract<RelayLine, { kind: 'shell-execute' }>): Record<string, string> {
  return {
    fMask: line.mask,
    lpVerb: line.verb ?? '0x0',
    lpFile: line.file ?? '0x0',
    lpParameters: line.parameters ?? '0x0',
    lpDirectory: line.directory ?? '0x0',
    nShow: line.show,
  };
}

/**
 * Arguments by their documented names: counts as numbers, strings as passed, the rest as `0x...` text.
 * A 32-bit argument (DWORD, BOOL, UINT, int: by its Hungarian prefix) keeps its low 32 bits only: a 64-bit
 * program passes it in a register whose upper half relay prints as it found it.
 */
function namedArgs(args: readonly RelayArg[], names: readonly string[]): Record<string, string | number> {
  const named: Record<string, string | number> = {};
  args.forEach((arg, i) => {
    const name = (names[i] ?? `arg${i + 1}`).replace(/^#/, '');
    const hex = isDword(name) && /^[0-9a-f]{9,16}$/i.test(arg.hex) ? arg.hex.slice(-8) : arg.hex;
    if (names[i]?.startsWith('#')) named[name] = /^[0-9a-f]+$/i.test(hex) ? Number(signedValue(hex)) : hex;
    else named[name] = arg.text ?? `0x${hex}`;
  });
  return named;
}

/** Sizes that are SIZE_T though their prefix says DWORD. */
const WIDE_SIZES = new Set(['dwSize', 'nSize', 'dwStackSize']);

function isDword(name: string): boolean {
  return !WIDE_SIZES.has(name) && (/^(dw|fl|b|u|n|f|id|v|i)[A-Z]/.test(name) || ['af', 'type', 'protocol', 'flags', 'Algid', 'NameType', 'samDesired', 'ulOptions', 'Reserved', 'csidl', 'uMode'].includes(name));
}

/** Handle arguments that designate a process (or a thread of one). */
const TARGET_ARGS = ['hProcess', 'ProcessHandle', 'hThread', 'ThreadHandle'];
const CURRENT = new Set(['ffffffff', 'ffffffffffffffff', 'fffffffe', 'fffffffffffffffe']);

/**
 * `process_identifier` (Cuckoo's monitor's name): the Wine pid of the process a call's process or thread
 * handle designates, from the handles CreateProcess (`+process`) and OpenProcess gave; the caller itself
 * for the pseudo-handles of GetCurrentProcess/GetCurrentThread.
 */
function addTarget(process: WineProcess, winpid: number, args: Record<string, string | number>): void {
  const handle = TARGET_ARGS.map((name) => args[name]).find((value) => typeof value === 'string');
  if (typeof handle !== 'string') return;
  const key = normalHandle(handle);
  const target = CURRENT.has(key) ? winpid : process.targets.get(key);
  if (target !== undefined) args.process_identifier = target;
}

/** Relay's hex as the signed value the caller saw: 8 digits as a 32-bit value, more as a 64-bit one. */
export function signedValue(hex: string): number {
  if (hex.length <= 8) return parseInt(hex, 16) | 0;
  return Number(BigInt.asIntN(64, BigInt(`0x${hex}`)));
}

function succeeded(rule: SuccessRule, ret: number): boolean {
  switch (rule) {
    case 'nonzero':
      return ret !== 0;
    case 'handle':
      return ret !== 0 && ret !== -1;
    case 'zero':
      return ret === 0;
    case 'nonnegative':
      return ret >= 0;
    case 'notminus1':
      return ret !== -1;
    case 'always':
      return true;
  }
}

/** `regkey` and `filepath` of a call, and the handles a successful call gave, remembered for later calls. */
function addHandles(process: WineProcess, frame: Frame, args: Record<string, string | number>, retval: string | undefined): void {
  const regkey = addPaths(process, frame, args);
  if (KEY_OPENERS.test(frame.api) && frame.keyHandle) {
    args.key_handle = `0x${frame.keyHandle.handle}`;
    if (regkey !== undefined) process.keys.remember(frame.keyHandle.handle, regkey);
  }
  if (/^CreateFile[AW]$/.test(frame.api) && retval !== undefined && typeof args.lpFileName === 'string') {
    process.files.set(normalHandle(retval), args.lpFileName);
  }
  if (frame.api === 'OpenProcess' && retval !== undefined && typeof args.dwProcessId === 'number') {
    process.targets.set(normalHandle(retval), args.dwProcessId);
  }
}

function addPaths(process: WineProcess, frame: Frame, args: Record<string, string | number>): string | undefined {
  const regkey = registryPath(process, frame.api, args);
  if (regkey !== undefined) args.regkey = regkey;
  const file = typeof args.hFile === 'string' ? process.files.get(normalHandle(args.hFile)) : undefined;
  if (file !== undefined) args.filepath = file;
  // Cuckoo's monitor's names for the files a call names.
  if (typeof args.lpFileName === 'string' && !args.lpFileName.startsWith('0x') && /File/.test(frame.api)) args.filepath = args.lpFileName;
  if (typeof args.lpExistingFileName === 'string') args.oldfilepath = args.lpExistingFileName;
  if (typeof args.lpNewFileName === 'string') args.newfilepath = args.lpNewFileName;
  return regkey;
}

/** The key (or key\value) a registry call works on, from its key handle and names. */
function registryPath(process: WineProcess, api: string, args: Record<string, string | number>): string | undefined {
  const handle = args.hKey ?? args.hkey;
  if (typeof handle !== 'string') return undefined;
  const key = process.keys.pathOf(handle.replace(/^0x/, ''));
  if (key === undefined) return undefined;
  const text = (name: string) => (typeof args[name] === 'string' && !String(args[name]).startsWith('0x') ? String(args[name]) : undefined);
  if (KEY_OPENERS.test(api) || KEY_CALLS.test(api)) return joinKey(key, text('lpSubKey'));
  if (VALUE_CALLS.test(api)) return joinKey(key, text('lpValueName'));
  if (api === 'RegSetKeyValueW') return joinKey(joinKey(key, text('lpSubKey')), text('lpValueName'));
  if (api === 'RegGetValueW') return joinKey(joinKey(key, text('lpSubKey')), text('lpValue'));
  return undefined;
}

/** Whether CreateFile's disposition may create the file (CREATE_NEW, CREATE_ALWAYS, OPEN_ALWAYS). */
export function mayCreate(disposition: string | number | undefined): boolean {
  const value = typeof disposition === 'string' ? parseInt(disposition, 16) : disposition;
  return value !== undefined && CREATE_DISPOSITIONS.has(value);
}
