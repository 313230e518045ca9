import type { BehaviorEvent } from '../report/events.js';
import { mayCreate } from '../report/wine-calls.js';

/**
 * The `behavior.summary` keys Cuckoo fills from a Windows call (file_created, file_written, regkey_written,
 * mutex, command_line, connects_host, resolves_host...), with their values: Windows paths and registry
 * paths as the program named them. Failed calls count only where Cuckoo counts them (file_failed).
 * The calls are a Wine task's (the APIs Wine traces) or a Windows guest's (the APIs Cuckoo's monitor
 * hooks, mostly ntdll's): where both name a file, the full path Cuckoo's monitor adds (`filepath`,
 * `dirpath`, `oldfilepath`) wins over the path as the program passed it.
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

  /** The first of the names that holds text. */
  first(...names: string[]): string | undefined {
    for (const name of names) {
      const value = this.text(name);
      if (value !== undefined && value !== '') return value;
    }
    return undefined;
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
  const from = args.first('oldfilepath', 'lpExistingFileName');
  const to = args.first('newfilepath', 'lpNewFileName');
  return from && to ? [[key, `${from} -> ${to}`], ['file_created', to]] : [];
};

const keyed = (key: string, ...names: string[]): Rule => (args) => pairs(key, args.first(...names));

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
  const file = args.first('filepath', 'lpFile');
  const parameters = args.text('lpParameters');
  return pairs('command_line', file && parameters ? `${file} ${parameters}` : file);
};

/** IO_STATUS_BLOCK.Information of NtCreateFile/NtOpenFile, which Cuckoo's monitor logs as `status_info`. */
const FILE_SUPERSEDED = 0;
const FILE_CREATED = 2;
const FILE_OVERWRITTEN = 3;
const FILE_DOES_NOT_EXIST = 5;

/** A native open: what became of the file, as Cuckoo's monitor reads it from the call's status block. */
const nativeOpen: Rule = (args, call) => {
  const path = args.first('filepath');
  if (!call.status) return pairs('file_failed', path);
  switch (call.args.status_info) {
    case FILE_CREATED:
      return pairs('file_created', path);
    case FILE_SUPERSEDED:
    case FILE_OVERWRITTEN:
      return pairs('file_recreated', path);
    case FILE_DOES_NOT_EXIST:
      return pairs('file_failed', path);
    default:
      return pairs('file_opened', path);
  }
};

/** Rules by API; a rule sees only successful calls unless listed in ALSO_FAILED. */
const RULES: Record<string, Rule> = {
  CreateFileW: createFile,
  CreateFileA: createFile,
  WriteFile: keyed('file_written', 'filepath'),
  ReadFile: keyed('file_read', 'filepath'),
  DeleteFileW: keyed('file_deleted', 'filepath', 'lpFileName'),
  DeleteFileA: keyed('file_deleted', 'filepath', 'lpFileName'),
  NtDeleteFile: keyed('file_deleted', 'filepath'),
  NtCreateFile: nativeOpen,
  NtOpenFile: nativeOpen,
  NtReadFile: keyed('file_read', 'filepath'),
  NtWriteFile: keyed('file_written', 'filepath'),
  MoveFileWithProgressW: moved('file_moved'),
  MoveFileW: moved('file_moved'),
  MoveFileA: moved('file_moved'),
  MoveFileExW: moved('file_moved'),
  MoveFileExA: moved('file_moved'),
  CopyFileW: moved('file_copied'),
  CopyFileA: moved('file_copied'),
  CopyFileExW: moved('file_copied'),
  CreateDirectoryW: keyed('directory_created', 'dirpath', 'lpPathName'),
  CreateDirectoryA: keyed('directory_created', 'dirpath', 'lpPathName'),
  CreateDirectoryExW: keyed('directory_created', 'dirpath', 'lpNewDirectory'),
  RemoveDirectoryW: keyed('directory_removed', 'dirpath', 'lpPathName'),
  RemoveDirectoryA: keyed('directory_removed', 'dirpath', 'lpPathName'),
  FindFirstFileW: keyed('directory_enumerated', 'lpFileName'),
  FindFirstFileA: keyed('directory_enumerated', 'lpFileName'),
  FindFirstFileExW: keyed('directory_enumerated', 'filepath', 'lpFileName'),
  FindFirstFileExA: keyed('directory_enumerated', 'filepath', 'lpFileName'),
  GetFileAttributesW: keyed('file_exists', 'filepath', 'lpFileName'),
  GetFileAttributesA: keyed('file_exists', 'lpFileName'),
  GetFileAttributesExW: keyed('file_exists', 'filepath', 'lpFileName'),
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
  NtCreateKey: keyed('regkey_opened', 'regkey'),
  NtOpenKey: keyed('regkey_opened', 'regkey'),
  NtOpenKeyEx: keyed('regkey_opened', 'regkey'),
  NtSetValueKey: keyed('regkey_written', 'regkey'),
  NtQueryValueKey: keyed('regkey_read', 'regkey'),
  NtDeleteValueKey: keyed('regkey_deleted', 'regkey'),
  NtDeleteKey: keyed('regkey_deleted', 'regkey'),
  LoadLibraryW: keyed('dll_loaded', 'lpLibFileName'),
  LoadLibraryA: keyed('dll_loaded', 'lpLibFileName'),
  LoadLibraryExW: keyed('dll_loaded', 'lpLibFileName'),
  LoadLibraryExA: keyed('dll_loaded', 'lpLibFileName'),
  LdrLoadDll: keyed('dll_loaded', 'module_name'),
  CreateMutexW: keyed('mutex', 'lpName'),
  CreateMutexA: keyed('mutex', 'lpName'),
  CreateMutexExW: keyed('mutex', 'lpName'),
  OpenMutexW: keyed('mutex', 'lpName'),
  OpenMutexA: keyed('mutex', 'lpName'),
  NtCreateMutant: keyed('mutex', 'mutant_name'),
  NtOpenMutant: keyed('mutex', 'mutant_name'),
  CreateProcessW: processStart('lpCommandLine', 'lpApplicationName'),
  CreateProcessA: processStart('lpCommandLine', 'lpApplicationName'),
  CreateProcessInternalW: processStart('lpCommandLine', 'lpApplicationName'),
  WinExec: keyed('command_line', 'lpCmdLine'),
  ShellExecuteW: shellExecute,
  ShellExecuteA: shellExecute,
  ShellExecuteExW: shellExecute,
  ShellExecuteExA: shellExecute,
  system: keyed('command_line', 'command'),
  gethostbyname: keyed('resolves_host', 'name'),
  getaddrinfo: keyed('resolves_host', 'pNodeName'),
  GetAddrInfoW: keyed('resolves_host', 'pNodeName'),
  DnsQuery_A: keyed('resolves_host', 'hostname'),
  DnsQuery_W: keyed('resolves_host', 'hostname'),
  DnsQuery_UTF8: keyed('resolves_host', 'hostname'),
  connect: keyed('connects_ip', 'ip_address'),
  ConnectEx: keyed('connects_ip', 'ip_address'),
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
  'LoadLibraryExW', 'LoadLibraryExA', 'NtCreateFile', 'NtOpenFile', 'NtOpenMutant', 'NtOpenKey', 'NtOpenKeyEx', 'NtQueryValueKey',
  'LdrLoadDll', 'DnsQuery_A', 'DnsQuery_W', 'DnsQuery_UTF8', 'connect', 'ConnectEx',
]);

export function windowsSummary(call: WindowsCall): Values {
  const rule = call.api === undefined ? undefined : RULES[call.api];
  if (!rule || (!call.status && !ALSO_FAILED.has(call.api!))) return [];
  return rule(new Args(call.args ?? {}), call);
}
