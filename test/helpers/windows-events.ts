import type { WindowsCallCategory } from '../../src/report/report-types.js';
import type { EventLog } from './signatures.js';

/**
 * Windows API calls (`win.call` events) as processing writes them from Wine's relay log
 * (src/report/events.ts): the host's pid, tid and comm of the Wine process (Wine names it after the
 * program), Wine's own ids, args by their documented names (strings as passed, handles and flags as
 * `0x...` text, counts as numbers), plus the `regkey`/`filepath` processing resolves.
 */

/** DLL and Cuckoo category of the APIs the tests use (the real table is src/report/windows-apis.ts). */
const APIS: Record<string, [module: string, category: WindowsCallCategory]> = {
  CreateFile: ['kernel32', 'filesystem'], DeleteFile: ['kernel32', 'filesystem'], MoveFileEx: ['kernel32', 'filesystem'], MoveFile: ['kernel32', 'filesystem'],
  GetFileAttributes: ['kernel32', 'filesystem'], WriteFile: ['kernel32', 'filesystem'], CreateProcess: ['kernel32', 'process'], WinExec: ['kernel32', 'process'],
  VirtualAllocEx: ['kernel32', 'process'], WriteProcessMemory: ['kernel32', 'process'], OpenProcess: ['kernel32', 'process'], VirtualQueryEx: ['kernel32', 'process'],
  CreateRemoteThread: ['kernel32', 'threading'], SetThreadContext: ['kernel32', 'threading'], ResumeThread: ['kernel32', 'threading'], GetThreadContext: ['kernel32', 'threading'],
  NtUnmapViewOfSection: ['ntdll', 'process'], NtQueryInformationProcess: ['ntdll', 'process'], NtSetInformationThread: ['ntdll', 'threading'],
  IsDebuggerPresent: ['kernel32', 'system'], CheckRemoteDebuggerPresent: ['kernel32', 'system'], GetProcAddress: ['kernel32', 'system'], GetModuleHandle: ['kernel32', 'system'],
  LoadLibrary: ['kernel32', 'system'], CreateMutex: ['kernel32', 'synchronisation'], GetAdaptersInfo: ['iphlpapi', 'network'], lstrcmpi: ['kernel32', 'misc'],
  RegCreateKeyEx: ['advapi32', 'registry'], RegCreateKey: ['advapi32', 'registry'], RegOpenKeyEx: ['advapi32', 'registry'], RegSetValueEx: ['advapi32', 'registry'],
  RegSetKeyValue: ['advapi32', 'registry'], RegQueryValueEx: ['advapi32', 'registry'], RegCloseKey: ['advapi32', 'registry'],
  OpenSCManager: ['advapi32', 'services'], CreateService: ['advapi32', 'services'], OpenService: ['advapi32', 'services'], ControlService: ['advapi32', 'services'],
  QueryServiceStatus: ['advapi32', 'services'], SetWindowsHookEx: ['user32', 'hooking'], GetAsyncKeyState: ['user32', 'ui'], GetKeyState: ['user32', 'ui'],
  FindWindow: ['user32', 'ui'], CreateWindowEx: ['user32', 'ui'], URLDownloadToFile: ['urlmon', 'network'], InternetOpen: ['wininet', 'network'],
  InternetOpenUrl: ['wininet', 'network'], InternetReadFile: ['wininet', 'network'], ShellExecute: ['shell32', 'process'],
};

function apiInfo(api: string): [string, WindowsCallCategory] {
  return APIS[api] ?? APIS[api.replace(/[AW]$/, '')] ?? ['kernel32', 'misc'];
}

export interface CallOptions {
  ret?: number;
  status?: boolean;
  /** Times the call was repeated with the same arguments right after (processing folds repeats). */
  repeated?: number;
}

/** One Wine process of a scenario: its host pid and name, and Wine's pid for it. */
export class WineProcess {
  constructor(
    readonly log: EventLog,
    readonly pid: number,
    readonly comm: string,
    readonly winpid: number,
  ) {}

  call(api: string, args: Record<string, string | number> = {}, options: CallOptions = {}): this {
    const [module, category] = apiInfo(api);
    const ret = options.ret ?? 1;
    const repeated = options.repeated === undefined ? {} : { repeated: options.repeated };
    this.log.add(
      this.pid,
      { kind: 'win.call', module, category, args, ret, status: options.status ?? ret !== 0, winpid: this.winpid, wintid: this.winpid + 4, ...repeated },
      { comm: this.comm, api, tid: this.pid },
    );
    return this;
  }
}

/**
 * A Wine process as the Linux monitor sees it start: Wine's loader exec'd with the program's Windows path,
 * then renamed after the program (its comm). Returns the process to add calls to.
 */
export function startWineProcess(log: EventLog, pid: number, windowsPath: string, options: { ppid?: number; winpid?: number } = {}): WineProcess {
  const name = windowsPath.slice(windowsPath.lastIndexOf('\\') + 1).slice(0, 15);
  log.exec(pid, '/usr/lib/wine/wine64', ['/usr/lib/wine/wine64', windowsPath]);
  log.add(pid, { kind: 'process.rename', name }, { comm: 'wine64', ppid: options.ppid });
  return new WineProcess(log, pid, name, options.winpid ?? pid * 4);
}

export const SAMPLE_FOLDER = 'C:\\Users\\abecker\\AppData\\Local\\Temp';
