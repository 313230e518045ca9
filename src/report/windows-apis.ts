import type { WindowsCallCategory } from './report-types.js';

/**
 * The Windows API calls a Wine task records: for each, its DLL, name, Cuckoo's category, its arguments by
 * their documented names, and what success is for it. The machine writes `relayIncludeList()` into the
 * prefix's relay settings, so Wine traces exactly these; processing names a traced call's arguments from
 * here. The calls are those that tell what a program does to the system (files, registry, processes,
 * memory of other processes, network, services, hooks, crypto, anti-analysis checks), not the C runtime's.
 */

/** How an API says it succeeded. */
export type SuccessRule =
  /** BOOL, handle or pointer: not zero. */
  | 'nonzero'
  /** A handle that is neither NULL nor INVALID_HANDLE_VALUE. */
  | 'handle'
  /** LSTATUS, HRESULT, Winsock's 0: zero (or, for HRESULTs, not negative). */
  | 'zero'
  /** NTSTATUS and HRESULT: not negative. */
  | 'nonnegative'
  /** Winsock counts and sockets: not SOCKET_ERROR / INVALID_SOCKET (-1). */
  | 'notminus1'
  /** Calls that cannot fail (GetTickCount, Sleep). */
  | 'always';

export interface WindowsApi {
  /** The DLL that documents it, lower case without `.dll`. */
  module: string;
  name: string;
  category: WindowsCallCategory;
  /**
   * Argument names in order. A name starting with `#` is a plain count or size, shown as a number; every
   * other argument is a string when Wine showed one, otherwise a `0x...` handle, pointer or flag.
   */
  args: readonly string[];
  success: SuccessRule;
}

/** DLLs whose exports Wine also has in kernelbase (kernel32's and advapi32's are forwarded there). */
const ALSO_IN: Record<string, readonly string[]> = { kernel32: ['kernelbase'], advapi32: ['kernelbase'] };

type Row = [name: string, category: WindowsCallCategory, args: string, success?: SuccessRule];

/** Rows by DLL: `name, category, 'arg1 arg2 #count', success (default nonzero)`. */
const ROWS: Record<string, readonly Row[]> = {
  kernel32: [
    // Files
    ['CreateFileW', 'filesystem', 'lpFileName dwDesiredAccess dwShareMode lpSecurityAttributes dwCreationDisposition dwFlagsAndAttributes hTemplateFile', 'handle'],
    ['CreateFileA', 'filesystem', 'lpFileName dwDesiredAccess dwShareMode lpSecurityAttributes dwCreationDisposition dwFlagsAndAttributes hTemplateFile', 'handle'],
    ['WriteFile', 'filesystem', 'hFile lpBuffer #nNumberOfBytesToWrite lpNumberOfBytesWritten lpOverlapped'],
    ['ReadFile', 'filesystem', 'hFile lpBuffer #nNumberOfBytesToRead lpNumberOfBytesRead lpOverlapped'],
    ['DeleteFileW', 'filesystem', 'lpFileName'],
    ['DeleteFileA', 'filesystem', 'lpFileName'],
    ['MoveFileW', 'filesystem', 'lpExistingFileName lpNewFileName'],
    ['MoveFileA', 'filesystem', 'lpExistingFileName lpNewFileName'],
    ['MoveFileExW', 'filesystem', 'lpExistingFileName lpNewFileName dwFlags'],
    ['MoveFileExA', 'filesystem', 'lpExistingFileName lpNewFileName dwFlags'],
    ['CopyFileW', 'filesystem', 'lpExistingFileName lpNewFileName bFailIfExists'],
    ['CopyFileA', 'filesystem', 'lpExistingFileName lpNewFileName bFailIfExists'],
    ['CopyFileExW', 'filesystem', 'lpExistingFileName lpNewFileName lpProgressRoutine lpData pbCancel dwCopyFlags'],
    ['CreateDirectoryW', 'filesystem', 'lpPathName lpSecurityAttributes'],
    ['CreateDirectoryA', 'filesystem', 'lpPathName lpSecurityAttributes'],
    ['RemoveDirectoryW', 'filesystem', 'lpPathName'],
    ['RemoveDirectoryA', 'filesystem', 'lpPathName'],
    ['SetFileAttributesW', 'filesystem', 'lpFileName dwFileAttributes'],
    ['GetFileAttributesW', 'filesystem', 'lpFileName', 'notminus1'],
    ['GetFileAttributesA', 'filesystem', 'lpFileName', 'notminus1'],
    ['FindFirstFileW', 'filesystem', 'lpFileName lpFindFileData', 'handle'],
    ['FindFirstFileA', 'filesystem', 'lpFileName lpFindFileData', 'handle'],
    ['FindFirstFileExW', 'filesystem', 'lpFileName fInfoLevelId lpFindFileData fSearchOp lpSearchFilter dwAdditionalFlags', 'handle'],
    ['FindNextFileW', 'filesystem', 'hFindFile lpFindFileData'],
    ['FindNextFileA', 'filesystem', 'hFindFile lpFindFileData'],
    ['GetTempPathW', 'filesystem', '#nBufferLength lpBuffer'],
    ['GetSystemDirectoryW', 'filesystem', 'lpBuffer #uSize'],
    ['GetWindowsDirectoryW', 'filesystem', 'lpBuffer #uSize'],
    ['DeviceIoControl', 'device', 'hDevice dwIoControlCode lpInBuffer #nInBufferSize lpOutBuffer #nOutBufferSize lpBytesReturned lpOverlapped'],
    ['GetVolumeInformationW', 'filesystem', 'lpRootPathName lpVolumeNameBuffer #nVolumeNameSize lpVolumeSerialNumber lpMaximumComponentLength lpFileSystemFlags lpFileSystemNameBuffer #nFileSystemNameSize'],
    ['GetDiskFreeSpaceExW', 'filesystem', 'lpDirectoryName lpFreeBytesAvailableToCaller lpTotalNumberOfBytes lpTotalNumberOfFreeBytes'],
    // Processes and their memory
    ['CreateProcessW', 'process', 'lpApplicationName lpCommandLine lpProcessAttributes lpThreadAttributes bInheritHandles dwCreationFlags lpEnvironment lpCurrentDirectory lpStartupInfo lpProcessInformation'],
    ['CreateProcessA', 'process', 'lpApplicationName lpCommandLine lpProcessAttributes lpThreadAttributes bInheritHandles dwCreationFlags lpEnvironment lpCurrentDirectory lpStartupInfo lpProcessInformation'],
    ['CreateProcessInternalW', 'process', 'hToken lpApplicationName lpCommandLine lpProcessAttributes lpThreadAttributes bInheritHandles dwCreationFlags lpEnvironment lpCurrentDirectory lpStartupInfo lpProcessInformation hNewToken'],
    ['WinExec', 'process', 'lpCmdLine uCmdShow', 'notminus1'],
    ['OpenProcess', 'process', 'dwDesiredAccess bInheritHandle #dwProcessId'],
    ['TerminateProcess', 'process', 'hProcess uExitCode'],
    ['ExitProcess', 'process', 'uExitCode', 'always'],
    ['VirtualAlloc', 'process', 'lpAddress #dwSize flAllocationType flProtect'],
    ['VirtualAllocEx', 'process', 'hProcess lpAddress #dwSize flAllocationType flProtect'],
    ['VirtualProtect', 'process', 'lpAddress #dwSize flNewProtect lpflOldProtect'],
    ['VirtualProtectEx', 'process', 'hProcess lpAddress #dwSize flNewProtect lpflOldProtect'],
    ['WriteProcessMemory', 'process', 'hProcess lpBaseAddress lpBuffer #nSize lpNumberOfBytesWritten'],
    ['ReadProcessMemory', 'process', 'hProcess lpBaseAddress lpBuffer #nSize lpNumberOfBytesRead'],
    ['CreateToolhelp32Snapshot', 'process', 'dwFlags #th32ProcessID', 'handle'],
    ['Process32FirstW', 'process', 'hSnapshot lppe'],
    ['Process32NextW', 'process', 'hSnapshot lppe'],
    ['Process32First', 'process', 'hSnapshot lppe'],
    ['Process32Next', 'process', 'hSnapshot lppe'],
    // Threads
    ['CreateThread', 'threading', 'lpThreadAttributes #dwStackSize lpStartAddress lpParameter dwCreationFlags lpThreadId'],
    ['CreateRemoteThread', 'threading', 'hProcess lpThreadAttributes #dwStackSize lpStartAddress lpParameter dwCreationFlags lpThreadId'],
    ['CreateRemoteThreadEx', 'threading', 'hProcess lpThreadAttributes #dwStackSize lpStartAddress lpParameter dwCreationFlags lpAttributeList lpThreadId'],
    ['ResumeThread', 'threading', 'hThread', 'notminus1'],
    ['SuspendThread', 'threading', 'hThread', 'notminus1'],
    ['SetThreadContext', 'threading', 'hThread lpContext'],
    ['GetThreadContext', 'threading', 'hThread lpContext'],
    ['QueueUserAPC', 'threading', 'pfnAPC hThread dwData'],
    // Synchronisation and time
    ['CreateMutexW', 'synchronisation', 'lpMutexAttributes bInitialOwner lpName'],
    ['CreateMutexA', 'synchronisation', 'lpMutexAttributes bInitialOwner lpName'],
    ['CreateMutexExW', 'synchronisation', 'lpMutexAttributes lpName dwFlags dwDesiredAccess'],
    ['OpenMutexW', 'synchronisation', 'dwDesiredAccess bInheritHandle lpName'],
    ['OpenMutexA', 'synchronisation', 'dwDesiredAccess bInheritHandle lpName'],
    ['CreateEventW', 'synchronisation', 'lpEventAttributes bManualReset bInitialState lpName'],
    ['Sleep', 'synchronisation', '#dwMilliseconds', 'always'],
    ['SleepEx', 'synchronisation', '#dwMilliseconds bAlertable', 'always'],
    ['GetTickCount', 'synchronisation', '', 'always'],
    ['GetTickCount64', 'synchronisation', '', 'always'],
    ['QueryPerformanceCounter', 'synchronisation', 'lpPerformanceCount'],
    // Modules
    ['LoadLibraryW', 'system', 'lpLibFileName'],
    ['LoadLibraryA', 'system', 'lpLibFileName'],
    ['LoadLibraryExW', 'system', 'lpLibFileName hFile dwFlags'],
    ['LoadLibraryExA', 'system', 'lpLibFileName hFile dwFlags'],
    ['GetProcAddress', 'system', 'hModule lpProcName'],
    ['GetModuleHandleW', 'system', 'lpModuleName'],
    ['GetModuleHandleA', 'system', 'lpModuleName'],
    ['GetModuleFileNameW', 'system', 'hModule lpFilename #nSize'],
    // The system, and checks for debuggers and virtual machines
    ['IsDebuggerPresent', 'system', '', 'always'],
    ['CheckRemoteDebuggerPresent', 'system', 'hProcess pbDebuggerPresent'],
    ['OutputDebugStringA', 'system', 'lpOutputString', 'always'],
    ['OutputDebugStringW', 'system', 'lpOutputString', 'always'],
    ['GetComputerNameW', 'system', 'lpBuffer lpnSize'],
    ['GetComputerNameA', 'system', 'lpBuffer lpnSize'],
    ['GetComputerNameExW', 'system', 'NameType lpBuffer lpnSize'],
    ['GetSystemInfo', 'system', 'lpSystemInfo', 'always'],
    ['GlobalMemoryStatusEx', 'system', 'lpBuffer'],
    ['GetVersionExW', 'system', 'lpVersionInformation'],
    ['GetVersionExA', 'system', 'lpVersionInformation'],
    ['SetErrorMode', 'system', 'uMode', 'always'],
    ['SetUnhandledExceptionFilter', 'exception', 'lpTopLevelExceptionFilter', 'always'],
    ['FindResourceW', 'resource', 'hModule lpName lpType'],
    ['FindResourceA', 'resource', 'hModule lpName lpType'],
    ['LoadResource', 'resource', 'hModule hResInfo'],
  ],
  ntdll: [
    ['NtCreateFile', 'filesystem', 'FileHandle DesiredAccess ObjectAttributes IoStatusBlock AllocationSize FileAttributes ShareAccess CreateDisposition CreateOptions EaBuffer #EaLength', 'nonnegative'],
    ['NtDeleteFile', 'filesystem', 'ObjectAttributes', 'nonnegative'],
    ['NtOpenProcess', 'process', 'ProcessHandle DesiredAccess ObjectAttributes ClientId', 'nonnegative'],
    ['NtAllocateVirtualMemory', 'process', 'ProcessHandle BaseAddress ZeroBits RegionSize AllocationType Protect', 'nonnegative'],
    ['NtWriteVirtualMemory', 'process', 'ProcessHandle BaseAddress Buffer #NumberOfBytesToWrite NumberOfBytesWritten', 'nonnegative'],
    ['NtProtectVirtualMemory', 'process', 'ProcessHandle BaseAddress RegionSize NewProtect OldProtect', 'nonnegative'],
    ['NtUnmapViewOfSection', 'process', 'ProcessHandle BaseAddress', 'nonnegative'],
    ['NtMapViewOfSection', 'process', 'SectionHandle ProcessHandle BaseAddress ZeroBits CommitSize SectionOffset ViewSize InheritDisposition AllocationType Win32Protect', 'nonnegative'],
    ['NtQueryInformationProcess', 'process', 'ProcessHandle ProcessInformationClass ProcessInformation #ProcessInformationLength ReturnLength', 'nonnegative'],
    ['NtTerminateProcess', 'process', 'ProcessHandle ExitStatus', 'nonnegative'],
    ['NtCreateThreadEx', 'threading', 'ThreadHandle DesiredAccess ObjectAttributes ProcessHandle StartRoutine Argument CreateFlags ZeroBits StackSize MaximumStackSize AttributeList', 'nonnegative'],
    ['RtlCreateUserThread', 'threading', 'ProcessHandle SecurityDescriptor CreateSuspended StackZeroBits StackReserved StackCommit StartAddress StartParameter ThreadHandle ClientId', 'nonnegative'],
    ['NtQueueApcThread', 'threading', 'ThreadHandle ApcRoutine ApcArgument1 ApcArgument2 ApcArgument3', 'nonnegative'],
    ['NtResumeThread', 'threading', 'ThreadHandle SuspendCount', 'nonnegative'],
    ['NtSetContextThread', 'threading', 'ThreadHandle Context', 'nonnegative'],
    ['NtSetInformationThread', 'threading', 'ThreadHandle ThreadInformationClass ThreadInformation #ThreadInformationLength', 'nonnegative'],
    ['NtDelayExecution', 'synchronisation', 'Alertable DelayInterval', 'nonnegative'],
    ['NtQuerySystemInformation', 'system', 'SystemInformationClass SystemInformation #SystemInformationLength ReturnLength', 'nonnegative'],
    ['LdrLoadDll', 'system', 'PathToFile Flags ModuleFileName ModuleHandle', 'nonnegative'],
    ['LdrGetProcedureAddress', 'system', 'ModuleHandle FunctionName Ordinal FunctionAddress', 'nonnegative'],
    ['RtlAdjustPrivilege', 'system', 'Privilege Enable CurrentThread Enabled', 'nonnegative'],
  ],
  advapi32: [
    ['RegCreateKeyExW', 'registry', 'hKey lpSubKey Reserved lpClass dwOptions samDesired lpSecurityAttributes phkResult lpdwDisposition', 'zero'],
    ['RegCreateKeyExA', 'registry', 'hKey lpSubKey Reserved lpClass dwOptions samDesired lpSecurityAttributes phkResult lpdwDisposition', 'zero'],
    ['RegCreateKeyW', 'registry', 'hKey lpSubKey phkResult', 'zero'],
    ['RegCreateKeyA', 'registry', 'hKey lpSubKey phkResult', 'zero'],
    ['RegOpenKeyExW', 'registry', 'hKey lpSubKey ulOptions samDesired phkResult', 'zero'],
    ['RegOpenKeyExA', 'registry', 'hKey lpSubKey ulOptions samDesired phkResult', 'zero'],
    ['RegOpenKeyW', 'registry', 'hKey lpSubKey phkResult', 'zero'],
    ['RegOpenKeyA', 'registry', 'hKey lpSubKey phkResult', 'zero'],
    ['RegSetValueExW', 'registry', 'hKey lpValueName Reserved dwType lpData #cbData', 'zero'],
    ['RegSetValueExA', 'registry', 'hKey lpValueName Reserved dwType lpData #cbData', 'zero'],
    ['RegSetKeyValueW', 'registry', 'hKey lpSubKey lpValueName dwType lpData #cbData', 'zero'],
    ['RegQueryValueExW', 'registry', 'hKey lpValueName lpReserved lpType lpData lpcbData', 'zero'],
    ['RegQueryValueExA', 'registry', 'hKey lpValueName lpReserved lpType lpData lpcbData', 'zero'],
    ['RegGetValueW', 'registry', 'hkey lpSubKey lpValue dwFlags pdwType pvData pcbData', 'zero'],
    ['RegDeleteKeyW', 'registry', 'hKey lpSubKey', 'zero'],
    ['RegDeleteKeyA', 'registry', 'hKey lpSubKey', 'zero'],
    ['RegDeleteKeyExW', 'registry', 'hKey lpSubKey samDesired Reserved', 'zero'],
    ['RegDeleteTreeW', 'registry', 'hKey lpSubKey', 'zero'],
    ['RegDeleteValueW', 'registry', 'hKey lpValueName', 'zero'],
    ['RegDeleteValueA', 'registry', 'hKey lpValueName', 'zero'],
    ['RegEnumKeyExW', 'registry', 'hKey #dwIndex lpName lpcchName lpReserved lpClass lpcchClass lpftLastWriteTime', 'zero'],
    ['RegEnumValueW', 'registry', 'hKey #dwIndex lpValueName lpcchValueName lpReserved lpType lpData lpcbData', 'zero'],
    ['RegCloseKey', 'registry', 'hKey', 'zero'],
    ['GetUserNameW', 'system', 'lpBuffer pcbBuffer'],
    ['GetUserNameA', 'system', 'lpBuffer pcbBuffer'],
    ['OpenProcessToken', 'process', 'ProcessHandle DesiredAccess TokenHandle'],
    ['AdjustTokenPrivileges', 'process', 'TokenHandle DisableAllPrivileges NewState #BufferLength PreviousState ReturnLength'],
    ['LookupPrivilegeValueW', 'process', 'lpSystemName lpName lpLuid'],
    ['OpenSCManagerW', 'services', 'lpMachineName lpDatabaseName dwDesiredAccess'],
    ['OpenSCManagerA', 'services', 'lpMachineName lpDatabaseName dwDesiredAccess'],
    ['CreateServiceW', 'services', 'hSCManager lpServiceName lpDisplayName dwDesiredAccess dwServiceType dwStartType dwErrorControl lpBinaryPathName lpLoadOrderGroup lpdwTagId lpDependencies lpServiceStartName lpPassword'],
    ['CreateServiceA', 'services', 'hSCManager lpServiceName lpDisplayName dwDesiredAccess dwServiceType dwStartType dwErrorControl lpBinaryPathName lpLoadOrderGroup lpdwTagId lpDependencies lpServiceStartName lpPassword'],
    ['OpenServiceW', 'services', 'hSCManager lpServiceName dwDesiredAccess'],
    ['OpenServiceA', 'services', 'hSCManager lpServiceName dwDesiredAccess'],
    ['StartServiceW', 'services', 'hService #dwNumServiceArgs lpServiceArgVectors'],
    ['StartServiceA', 'services', 'hService #dwNumServiceArgs lpServiceArgVectors'],
    ['ControlService', 'services', 'hService dwControl lpServiceStatus'],
    ['ChangeServiceConfigW', 'services', 'hService dwServiceType dwStartType dwErrorControl lpBinaryPathName lpLoadOrderGroup lpdwTagId lpDependencies lpServiceStartName lpPassword lpDisplayName'],
    ['DeleteService', 'services', 'hService'],
    ['CryptAcquireContextW', 'crypto', 'phProv szContainer szProvider dwProvType dwFlags'],
    ['CryptAcquireContextA', 'crypto', 'phProv szContainer szProvider dwProvType dwFlags'],
    ['CryptGenKey', 'crypto', 'hProv Algid dwFlags phKey'],
    ['CryptDeriveKey', 'crypto', 'hProv Algid hBaseData dwFlags phKey'],
    ['CryptImportKey', 'crypto', 'hProv pbData #dwDataLen hPubKey dwFlags phKey'],
    ['CryptEncrypt', 'crypto', 'hKey hHash Final dwFlags pbData pdwDataLen #dwBufLen'],
    ['CryptDecrypt', 'crypto', 'hKey hHash Final dwFlags pbData pdwDataLen'],
    ['CryptCreateHash', 'crypto', 'hProv Algid hKey dwFlags phHash'],
    ['CryptHashData', 'crypto', 'hHash pbData #dwDataLen dwFlags'],
    ['CryptGenRandom', 'crypto', 'hProv #dwLen pbBuffer'],
  ],
  user32: [
    ['SetWindowsHookExW', 'hooking', 'idHook lpfn hmod dwThreadId'],
    ['SetWindowsHookExA', 'hooking', 'idHook lpfn hmod dwThreadId'],
    ['UnhookWindowsHookEx', 'hooking', 'hhk'],
    ['GetAsyncKeyState', 'ui', 'vKey', 'always'],
    ['GetKeyState', 'ui', 'nVirtKey', 'always'],
    ['GetKeyboardState', 'ui', 'lpKeyState'],
    ['RegisterRawInputDevices', 'ui', 'pRawInputDevices #uiNumDevices #cbSize'],
    ['GetForegroundWindow', 'ui', '', 'always'],
    ['FindWindowW', 'ui', 'lpClassName lpWindowName'],
    ['FindWindowA', 'ui', 'lpClassName lpWindowName'],
    ['FindWindowExW', 'ui', 'hWndParent hWndChildAfter lpszClass lpszWindow'],
    ['GetWindowTextW', 'ui', 'hWnd lpString #nMaxCount', 'always'],
    ['CreateWindowExW', 'ui', 'dwExStyle lpClassName lpWindowName dwStyle X Y nWidth nHeight hWndParent hMenu hInstance lpParam'],
    ['CreateWindowExA', 'ui', 'dwExStyle lpClassName lpWindowName dwStyle X Y nWidth nHeight hWndParent hMenu hInstance lpParam'],
    ['ShowWindow', 'ui', 'hWnd nCmdShow', 'always'],
    ['MessageBoxW', 'ui', 'hWnd lpText lpCaption uType'],
    ['MessageBoxA', 'ui', 'hWnd lpText lpCaption uType'],
    ['GetCursorPos', 'ui', 'lpPoint'],
    ['GetClipboardData', 'ui', 'uFormat'],
    ['SystemParametersInfoW', 'ui', 'uiAction uiParam pvParam fWinIni'],
    ['ExitWindowsEx', 'system', 'uFlags dwReason'],
  ],
  ws2_32: [
    ['WSAStartup', 'network', 'wVersionRequired lpWSAData', 'zero'],
    ['socket', 'network', 'af type protocol', 'notminus1'],
    ['WSASocketW', 'network', 'af type protocol lpProtocolInfo g dwFlags', 'notminus1'],
    ['connect', 'network', 's name #namelen', 'zero'],
    ['WSAConnect', 'network', 's name #namelen lpCallerData lpCalleeData lpSQOS lpGQOS', 'zero'],
    ['bind', 'network', 's name #namelen', 'zero'],
    ['listen', 'network', 's #backlog', 'zero'],
    ['accept', 'network', 's addr addrlen', 'notminus1'],
    ['send', 'network', 's buf #len flags', 'notminus1'],
    ['sendto', 'network', 's buf #len flags to #tolen', 'notminus1'],
    ['WSASend', 'network', 's lpBuffers #dwBufferCount lpNumberOfBytesSent dwFlags lpOverlapped lpCompletionRoutine', 'zero'],
    ['recv', 'network', 's buf #len flags', 'notminus1'],
    ['recvfrom', 'network', 's buf #len flags from fromlen', 'notminus1'],
    ['WSARecv', 'network', 's lpBuffers #dwBufferCount lpNumberOfBytesRecvd lpFlags lpOverlapped lpCompletionRoutine', 'zero'],
    ['closesocket', 'network', 's', 'zero'],
    ['gethostbyname', 'network', 'name'],
    ['getaddrinfo', 'network', 'pNodeName pServiceName pHints ppResult', 'zero'],
    ['GetAddrInfoW', 'network', 'pNodeName pServiceName pHints ppResult', 'zero'],
    ['inet_addr', 'network', 'cp', 'always'],
  ],
  wininet: [
    ['InternetOpenW', 'network', 'lpszAgent dwAccessType lpszProxy lpszProxyBypass dwFlags'],
    ['InternetOpenA', 'network', 'lpszAgent dwAccessType lpszProxy lpszProxyBypass dwFlags'],
    ['InternetOpenUrlW', 'network', 'hInternet lpszUrl lpszHeaders #dwHeadersLength dwFlags dwContext'],
    ['InternetOpenUrlA', 'network', 'hInternet lpszUrl lpszHeaders #dwHeadersLength dwFlags dwContext'],
    ['InternetConnectW', 'network', 'hInternet lpszServerName #nServerPort lpszUserName lpszPassword dwService dwFlags dwContext'],
    ['InternetConnectA', 'network', 'hInternet lpszServerName #nServerPort lpszUserName lpszPassword dwService dwFlags dwContext'],
    ['HttpOpenRequestW', 'network', 'hConnect lpszVerb lpszObjectName lpszVersion lpszReferrer lplpszAcceptTypes dwFlags dwContext'],
    ['HttpOpenRequestA', 'network', 'hConnect lpszVerb lpszObjectName lpszVersion lpszReferrer lplpszAcceptTypes dwFlags dwContext'],
    ['HttpSendRequestW', 'network', 'hRequest lpszHeaders #dwHeadersLength lpOptional #dwOptionalLength'],
    ['HttpSendRequestA', 'network', 'hRequest lpszHeaders #dwHeadersLength lpOptional #dwOptionalLength'],
    ['InternetReadFile', 'network', 'hFile lpBuffer #dwNumberOfBytesToRead lpdwNumberOfBytesRead'],
    ['InternetWriteFile', 'network', 'hFile lpBuffer #dwNumberOfBytesToWrite lpdwNumberOfBytesWritten'],
    ['InternetCloseHandle', 'network', 'hInternet'],
  ],
  winhttp: [
    ['WinHttpOpen', 'network', 'pszAgentW dwAccessType pszProxyW pszProxyBypassW dwFlags'],
    ['WinHttpConnect', 'network', 'hSession pswzServerName #nServerPort dwReserved'],
    ['WinHttpOpenRequest', 'network', 'hConnect pwszVerb pwszObjectName pwszVersion pwszReferrer ppwszAcceptTypes dwFlags'],
    ['WinHttpSendRequest', 'network', 'hRequest lpszHeaders #dwHeadersLength lpOptional #dwOptionalLength #dwTotalLength dwContext'],
    ['WinHttpReceiveResponse', 'network', 'hRequest lpReserved'],
    ['WinHttpReadData', 'network', 'hRequest lpBuffer #dwNumberOfBytesToRead lpdwNumberOfBytesRead'],
  ],
  urlmon: [
    ['URLDownloadToFileW', 'network', 'pCaller szURL szFileName dwReserved lpfnCB', 'zero'],
    ['URLDownloadToFileA', 'network', 'pCaller szURL szFileName dwReserved lpfnCB', 'zero'],
    ['URLDownloadToCacheFileW', 'network', 'lpUnkcaller szURL szFileName #cchFileName dwReserved pBSC', 'zero'],
  ],
  crypt32: [
    ['CryptProtectData', 'crypto', 'pDataIn szDataDescr pOptionalEntropy pvReserved pPromptStruct dwFlags pDataOut'],
    ['CryptUnprotectData', 'crypto', 'pDataIn ppszDataDescr pOptionalEntropy pvReserved pPromptStruct dwFlags pDataOut'],
    ['CertOpenSystemStoreW', 'certificate', 'hProv szSubsystemProtocol'],
    ['CertOpenStore', 'certificate', 'lpszStoreProvider dwEncodingType hCryptProv dwFlags pvPara'],
    ['CryptStringToBinaryA', 'crypto', 'pszString #cchString dwFlags pbBinary pcbBinary pdwSkip pdwFlags'],
  ],
  shell32: [
    ['ShellExecuteExW', 'process', 'pExecInfo'],
    ['ShellExecuteExA', 'process', 'pExecInfo'],
    ['ShellExecuteW', 'process', 'hwnd lpOperation lpFile lpParameters lpDirectory nShowCmd'],
    ['ShellExecuteA', 'process', 'hwnd lpOperation lpFile lpParameters lpDirectory nShowCmd'],
    ['SHGetFolderPathW', 'filesystem', 'hwnd csidl hToken dwFlags pszPath', 'zero'],
    ['SHGetSpecialFolderPathW', 'filesystem', 'hwndOwner lpszPath csidl fCreate'],
    ['SHFileOperationW', 'filesystem', 'lpFileOp', 'zero'],
  ],
  ole32: [
    ['CoCreateInstance', 'com', 'rclsid pUnkOuter dwClsContext riid ppv', 'nonnegative'],
    ['CoCreateInstanceEx', 'com', 'Clsid punkOuter dwClsCtx pServerInfo #dwCount pResults', 'nonnegative'],
    ['CoInitializeEx', 'com', 'pvReserved dwCoInit', 'nonnegative'],
    ['CoGetObject', 'com', 'pszName pBindOptions riid ppv', 'nonnegative'],
  ],
};

function apisOf(rows: Record<string, readonly Row[]>): Map<string, WindowsApi> {
  const byName = new Map<string, WindowsApi>();
  for (const [module, list] of Object.entries(rows)) {
    for (const [name, category, args, success] of list) {
      byName.set(name, { module, name, category, args: args === '' ? [] : args.split(' '), success: success ?? 'nonzero' });
    }
  }
  return byName;
}

/** Every recorded API by name (Windows names are unique across these DLLs). */
export const WINDOWS_APIS: ReadonlyMap<string, WindowsApi> = apisOf(ROWS);

export function windowsApi(name: string): WindowsApi | undefined {
  return WINDOWS_APIS.get(name);
}

/**
 * Wine's RelayInclude entries (`dll.Function`) that trace exactly these calls, for the prefix's
 * HKCU\Software\Wine\Debug `RelayInclude` (joined with `;`). A kernel32 or advapi32 call is listed under
 * kernelbase too, where Wine implements it.
 */
export function relayIncludeList(): string[] {
  const entries: string[] = [];
  for (const api of WINDOWS_APIS.values()) {
    for (const module of [api.module, ...(ALSO_IN[api.module] ?? [])]) entries.push(`${module}.${api.name}`);
  }
  return entries;
}

/**
 * Wine's RelayFromExclude entries: Wine's own DLLs, so that the calls they make to each other are not
 * traced and only the program's own calls (and its C runtime's: msvcrt and ucrtbase stay traced) remain.
 */
export function relayFromExcludeList(): string[] {
  return [
    ...Object.keys(ROWS), 'kernelbase', 'sechost', 'win32u', 'gdi32', 'imm32', 'uxtheme', 'comctl32', 'shlwapi', 'shcore',
    'combase', 'rpcrt4', 'oleaut32', 'iphlpapi', 'nsi', 'dnsapi', 'mswsock', 'secur32', 'bcrypt', 'rsaenh', 'wintrust', 'setupapi',
    'winex11.drv', 'winemac.drv', 'winewayland.drv', 'explorerframe', 'msi', 'mpr', 'netapi32', 'version', 'winmm', 'dwmapi',
  ];
}
