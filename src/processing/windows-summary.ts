import type { BehaviorEvent } from '../report/events.js';
import { mayCreate } from '../report/wine-calls.js';

/**
 * The `behavior.summary` keys Cuckoo fills from a Windows call (file_created, file_written, regkey_written,
 * mutex, command_line, connects_host, resolves_host...), with their values: Windows paths and registry
 * paths as the program named them. Failed calls count only where Cuckoo counts them (file_failed).
 */

type WindowsCall = Extract<BehaviorEvent, { kind: 'win.call' }>;
type Values = Array<[string, string]>;
type Rule = (args: Args, call: WindowsCall) => Values;

class Args {
  constructor(private readonly args: Record<string, string | number>) {}

  /** A string argument as passed; undefined when Wine showed only a pointer (NULL or unreadable). */
  text(name: string): string | undefined {
    const value = this.args[name];
    return typeof value === 'string' && !/^0x[0-9a-f]+$/i.test(value) ? value : undefined;
  }
}

const pairs = (key: string, ...values: Array<string | undefined>): Values =>
  values.filter((value): value is string => value !== undefined && value !== '').map((value) => [key, value]);

const createFile: Rule = (args, call) => {
  const path = args.text('lpFileName');
  if (!call.status) return pairs('file_failed', path);
  const access = parseInt(String(call.args.dwDesiredAccess ?? '0'), 16);
  const values = pairs('file_opened', path);
  if (mayCreate(call.args.dwCreationDisposition)) values.push(...pairs('file_created', path));
  // GENERIC_READ or FILE_READ_DATA, as Cuckoo's monitor tells a read open.
  if (access & 0x80000001) values.push(...pairs('file_read', path));
  return values;
};

const moved = (key: string): Rule => (args) => {
  const from = args.text('lpExistingFileName');
  const to = args.text('lpNewFileName');
  return from && to ? [[key, `${from} -> ${to}`], ['file_created', to]] : [];
};

const keyed = (key: string, arg: string): Rule => (args) => pairs(key, args.text(arg));

const hostOfUrl = (url: string | undefined): string | undefined => {
  if (url === undefined) return undefined;
  try {
    return new URL(url).hostname || undefined;
  } catch {
    return undefined;
  }
};

const fetched = (urlArg: string, fileArg?: string): Rule => (args, call) => {
  const url = args.text(urlArg);
  const file = fileArg === undefined || !call.status ? undefined : args.text(fileArg);
  return [...pairs('fetches_url', url), ...pairs('connects_host', hostOfUrl(url)), ...pairs('file_created', file), ...pairs('file_written', file)];
};

const processStart = (lineArg: string, appArg: string): Rule => (args) => pairs('command_line', args.text(lineArg) ?? args.text(appArg));

const shellExecute: Rule = (args) => {
  const file = args.text('lpFile');
  const parameters = args.text('lpParameters');
  return pairs('command_line', file && parameters ? `${file} ${parameters}` : file);
};

/** Rules by API; a rule sees only successful calls unless listed in ALSO_FAILED. */
const RULES: Record<string, Rule> = {
  CreateFileW: createFile,
  CreateFileA: createFile,
  WriteFile: keyed('file_written', 'filepath'),
  ReadFile: keyed('file_read', 'filepath'),
  DeleteFileW: keyed('file_deleted', 'lpFileName'),
  DeleteFileA: keyed('file_deleted', 'lpFileName'),
  MoveFileW: moved('file_moved'),
  MoveFileA: moved('file_moved'),
  MoveFileExW: moved('file_moved'),
  MoveFileExA: moved('file_moved'),
  CopyFileW: moved('file_copied'),
  CopyFileA: moved('file_copied'),
  CopyFileExW: moved('file_copied'),
  CreateDirectoryW: keyed('directory_created', 'lpPathName'),
  CreateDirectoryA: keyed('directory_created', 'lpPathName'),
  RemoveDirectoryW: keyed('directory_removed', 'lpPathName'),
  RemoveDirectoryA: keyed('directory_removed', 'lpPathName'),
  FindFirstFileW: keyed('directory_enumerated', 'lpFileName'),
  FindFirstFileA: keyed('directory_enumerated', 'lpFileName'),
  FindFirstFileExW: keyed('directory_enumerated', 'lpFileName'),
  GetFileAttributesW: keyed('file_exists', 'lpFileName'),
  GetFileAttributesA: keyed('file_exists', 'lpFileName'),
  RegCreateKeyExW: keyed('regkey_opened', 'regkey'),
  RegCreateKeyExA: keyed('regkey_opened', 'regkey'),
  RegCreateKeyW: keyed('regkey_opened', 'regkey'),
  RegCreateKeyA: keyed('regkey_opened', 'regkey'),
  RegOpenKeyExW: keyed('regkey_opened', 'regkey'),
  RegOpenKeyExA: keyed('regkey_opened', 'regkey'),
  RegOpenKeyW: keyed('regkey_opened', 'regkey'),
  RegOpenKeyA: keyed('regkey_opened', 'regkey'),
  RegSetValueExW: keyed('regkey_written', 'regkey'),
  RegSetValueExA: keyed('regkey_written', 'regkey'),
  RegSetKeyValueW: keyed('regkey_written', 'regkey'),
  RegQueryValueExW: keyed('regkey_read', 'regkey'),
  RegQueryValueExA: keyed('regkey_read', 'regkey'),
  RegGetValueW: keyed('regkey_read', 'regkey'),
  RegDeleteKeyW: keyed('regkey_deleted', 'regkey'),
  RegDeleteKeyA: keyed('regkey_deleted', 'regkey'),
  RegDeleteKeyExW: keyed('regkey_deleted', 'regkey'),
  RegDeleteTreeW: keyed('regkey_deleted', 'regkey'),
  RegDeleteValueW: keyed('regkey_deleted', 'regkey'),
  RegDeleteValueA: keyed('regkey_deleted', 'regkey'),
  LoadLibraryW: keyed('dll_loaded', 'lpLibFileName'),
  LoadLibraryA: keyed('dll_loaded', 'lpLibFileName'),
  LoadLibraryExW: keyed('dll_loaded', 'lpLibFileName'),
  LoadLibraryExA: keyed('dll_loaded', 'lpLibFileName'),
  CreateMutexW: keyed('mutex', 'lpName'),
  CreateMutexA: keyed('mutex', 'lpName'),
  CreateMutexExW: keyed('mutex', 'lpName'),
  OpenMutexW: keyed('mutex', 'lpName'),
  OpenMutexA: keyed('mutex', 'lpName'),
  CreateProcessW: processStart('lpCommandLine', 'lpApplicationName'),
  CreateProcessA: processStart('lpCommandLine', 'lpApplicationName'),
  CreateProcessInternalW: processStart('lpCommandLine', 'lpApplicationName'),
  WinExec: keyed('command_line', 'lpCmdLine'),
  ShellExecuteW: shellExecute,
  ShellExecuteA: shellExecute,
  ShellExecuteExW: shellExecute,
  ShellExecuteExA: shellExecute,
  gethostbyname: keyed('resolves_host', 'name'),
  getaddrinfo: keyed('resolves_host', 'pNodeName'),
  GetAddrInfoW: keyed('resolves_host', 'pNodeName'),
  InternetConnectW: keyed('connects_host', 'lpszServerName'),
  InternetConnectA: keyed('connects_host', 'lpszServerName'),
  WinHttpConnect: keyed('connects_host', 'pswzServerName'),
  InternetOpenUrlW: fetched('lpszUrl'),
  InternetOpenUrlA: fetched('lpszUrl'),
  URLDownloadToFileW: fetched('szURL', 'szFileName'),
  URLDownloadToFileA: fetched('szURL', 'szFileName'),
  CreateServiceW: keyed('service_created', 'lpServiceName'),
  CreateServiceA: keyed('service_created', 'lpServiceName'),
  StartServiceW: keyed('service_started', 'hService'),
};

/**
 * Calls whose attempt tells as much as their success: a program that looked a host up, opened a URL or
 * checked for a mutex did so whether or not the fake internet or the system answered.
 */
const ALSO_FAILED = new Set([
  'CreateFileW', 'CreateFileA', 'gethostbyname', 'getaddrinfo', 'GetAddrInfoW', 'InternetOpenUrlW', 'InternetOpenUrlA',
  'URLDownloadToFileW', 'URLDownloadToFileA', 'InternetConnectW', 'InternetConnectA', 'WinHttpConnect', 'OpenMutexW', 'OpenMutexA',
  'RegOpenKeyExW', 'RegOpenKeyExA', 'RegOpenKeyW', 'RegOpenKeyA', 'RegQueryValueExW', 'RegQueryValueExA', 'LoadLibraryW', 'LoadLibraryA',
  'LoadLibraryExW', 'LoadLibraryExA',
]);

export function windowsSummary(call: WindowsCall): Values {
  const rule = call.api === undefined ? undefined : RULES[call.api];
  if (!rule || (!call.status && !ALSO_FAILED.has(call.api!))) return [];
  return rule(new Args(call.args ?? {}), call);
}
