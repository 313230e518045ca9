import type { EventOf } from '../signature.js';

/**
 * Reading Windows API calls (`win.call` events) the way the Windows signatures need them: the API without
 * its A/W suffix, and arguments by name whether processing gave them as strings, numbers or `0x...` text.
 * Argument names: the documented ones (lpFileName, hKey...) and the derived ones processing adds in
 * Cuckoo's monitor's names (filepath, regkey, process_identifier); /work notes list both.
 */
export type WinCall = EventOf<'win.call'>;

/** `CreateFileW` -> `CreateFile`, `RegSetValueExA` -> `RegSetValueEx`; names without a suffix stay. */
export function baseApi(event: WinCall): string {
  const api = event.api ?? '';
  return /[A-Za-z0-9_](A|W)$/.test(api) ? api.slice(0, -1) : api;
}

/** The first of the named arguments that is a non-empty string. */
export function stringArg(event: WinCall, ...names: string[]): string | undefined {
  for (const name of names) {
    const value = event.args[name];
    if (typeof value === 'string' && value !== '') return value;
  }
  return undefined;
}

/** The first of the named arguments that holds an integer: a number, or hex text (`0x1f`, or bare as relay prints it). */
function integerArg(event: WinCall, names: readonly string[]): bigint | undefined {
  for (const name of names) {
    const value = event.args[name];
    if (typeof value === 'number' && Number.isInteger(value)) return BigInt(value);
    if (typeof value === 'string' && /^(0x)?[0-9a-f]{1,16}$/i.test(value)) return BigInt(/^0x/i.test(value) ? value : `0x${value}`);
  }
  return undefined;
}

/** The first of the named arguments that holds a number (see integerArg). */
export function numberArg(event: WinCall, ...names: string[]): number | undefined {
  const value = integerArg(event, names);
  return value === undefined ? undefined : Number(value);
}

/**
 * A 32-bit argument (DWORD, enum, int): only its low 32 bits, because 64-bit relay output can show stale
 * upper bits in a register that carried a 32-bit value (`100000004` for CREATE_SUSPENDED).
 */
export function dwordArg(event: WinCall, ...names: string[]): number | undefined {
  const value = integerArg(event, names);
  return value === undefined ? undefined : Number(BigInt.asUintN(32, value));
}

/** A handle or pointer argument as comparable text (`0x48`), or undefined. */
export function handleArg(event: WinCall, ...names: string[]): string | undefined {
  const value = integerArg(event, names);
  return value === undefined ? undefined : `0x${BigInt.asUintN(64, value).toString(16)}`;
}

/** A call's return value as handle text (`0x48`), to compare with handles passed later. */
export function returnedHandle(event: WinCall): string | undefined {
  return Number.isInteger(event.ret) ? `0x${BigInt.asUintN(64, BigInt(event.ret)).toString(16)}` : undefined;
}

/** GetCurrentProcess()'s pseudo-handle (-1), as a 32- or a 64-bit program passes it. */
const CURRENT_PROCESS = new Set(['0xffffffff', '0xffffffffffffffff']);

/**
 * Whether a call on a process handle aims at another process: by the pid processing resolved
 * (`process_identifier`), else by the handle not being the caller's own pseudo-handle.
 */
export function targetsOtherProcess(event: WinCall, ...handleNames: string[]): boolean {
  const pid = numberArg(event, 'process_identifier');
  if (pid !== undefined) return pid !== event.winpid;
  const handle = handleArg(event, ...handleNames);
  return handle !== undefined && !CURRENT_PROCESS.has(handle);
}

/** Which process a process-handle argument designates, as a key: the resolved pid, else the handle. */
export function processKey(event: WinCall, ...handleNames: string[]): string {
  const pid = numberArg(event, 'process_identifier');
  return pid !== undefined ? `pid:${pid}` : `handle:${handleArg(event, ...handleNames) ?? '?'}`;
}
