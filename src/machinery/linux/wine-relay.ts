/**
 * What Wine's relay tracing records, as the prepared prefix's HKCU\Software\Wine\Debug values. Which APIs
 * are traced is processing's choice (src/report/windows-apis.ts); until that table is on this branch the
 * list below stands in for it.
 */
const STAND_IN_INCLUDE = [
  'kernel32.CreateFileA', 'kernel32.CreateFileW', 'kernel32.WriteFile', 'kernel32.DeleteFileW', 'kernel32.MoveFileExW',
  'kernel32.CreateProcessW', 'kernel32.CreateProcessA', 'kernel32.CreateMutexW', 'kernel32.VirtualAllocEx',
  'kernel32.WriteProcessMemory', 'kernel32.CreateRemoteThread', 'kernel32.LoadLibraryW', 'kernel32.LoadLibraryA',
  'advapi32.RegCreateKeyExW', 'advapi32.RegSetValueExW', 'advapi32.RegOpenKeyExW', 'user32.CreateWindowExW',
  'ws2_32.connect', 'urlmon.URLDownloadToFileW', 'wininet.InternetOpenUrlA',
];

/**
 * Calls made from these modules are not recorded: Wine's own DLLs calling each other below the API the
 * sample called (Cuckoo records the outermost call too). The C runtimes are not here: their calls are
 * the program's own (fopen's CreateFileA).
 */
const STAND_IN_FROM_EXCLUDE = [
  'ntdll', 'kernel32', 'kernelbase', 'advapi32', 'sechost', 'user32', 'win32u', 'gdi32', 'winex11.drv', 'imm32',
  'uxtheme', 'comctl32', 'combase', 'rpcrt4', 'ole32', 'oleaut32', 'shell32', 'shlwapi', 'shcore', 'ws2_32',
  'mswsock', 'dnsapi', 'iphlpapi', 'nsi', 'wininet', 'winhttp', 'urlmon', 'iertutil', 'crypt32', 'secur32',
  'schannel', 'bcrypt', 'ncrypt', 'rsaenh', 'wintrust', 'setupapi', 'cfgmgr32', 'version', 'userenv',
  'profapi', 'msctf', 'dwmapi', 'netapi32', 'mpr', 'winspool.drv', 'explorerframe',
];

export interface RelaySettings {
  include: string[];
  fromExclude: string[];
}

export function relaySettings(): RelaySettings {
  return { include: STAND_IN_INCLUDE, fromExclude: STAND_IN_FROM_EXCLUDE };
}

/**
 * The sample's debug channels: what processing parses (see WINEDEBUG in Wine's documentation). `server`
 * is for wineserver: it turns its request trace on when the sample's first process connects (wine-pids.ts).
 */
export const SAMPLE_WINEDEBUG = 'fixme-all,+pid,+timestamp,+relay,+reg,+process,+server';
