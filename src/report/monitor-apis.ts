import type { WindowsCallCategory } from './report-types.js';
import { windowsApi } from './windows-apis.js';

/**
 * What processing needs to know of the calls Cuckoo's Windows monitor logs, beyond what its logs say.
 * The monitor's `info` messages name each API's arguments in its own words (`filepath`, `key_handle`,
 * `regkey_r`); a Wine task's calls name them as Microsoft documents them (`lpFileName`, `hKey`,
 * `lpValueName`), and the summary and the Windows signatures read those. So each argument the monitor
 * logs as a documented parameter is renamed to it here (`#` marks a count, shown as a number; every other
 * renamed number is a handle, pointer or flag, shown as `0x...` text). What the monitor adds of its own
 * (`regkey`, `filepath`, `process_identifier`, `status_info`...) keeps its name: Cuckoo's names are the
 * derived names of a Wine task's calls too. The `_r` names are the raw strings the program passed.
 */

type Renames = Record<string, string>;

/** `monitor=Documented` pairs by API. */
const RENAMES: Record<string, string> = {
  // Files
  NtCreateFile: 'file_handle=FileHandle desired_access=DesiredAccess file_attributes=FileAttributes create_disposition=CreateDisposition create_options=CreateOptions share_access=ShareAccess',
  NtOpenFile: 'file_handle=FileHandle desired_access=DesiredAccess open_options=OpenOptions share_access=ShareAccess',
  NtReadFile: 'file_handle=FileHandle length=#Length offset=ByteOffset',
  NtWriteFile: 'file_handle=FileHandle offset=ByteOffset',
  NtQueryInformationFile: 'file_handle=FileHandle information_class=FileInformationClass',
  NtSetInformationFile: 'file_handle=FileHandle information_class=FileInformationClass',
  NtQueryDirectoryFile: 'file_handle=FileHandle information_class=FileInformationClass',
  DeleteFileW: 'filepath_r=lpFileName',
  DeleteFileA: 'filepath_r=lpFileName',
  GetFileAttributesW: 'filepath_r=lpFileName',
  GetFileAttributesExW: 'filepath_r=lpFileName info_level=fInfoLevelId',
  SetFileAttributesW: 'filepath_r=lpFileName file_attributes=dwFileAttributes',
  FindFirstFileExW: 'filepath_r=lpFileName',
  FindFirstFileExA: 'filepath_r=lpFileName',
  CreateDirectoryW: 'dirpath_r=lpPathName',
  CreateDirectoryExW: 'dirpath_r=lpNewDirectory',
  RemoveDirectoryW: 'dirpath_r=lpPathName',
  RemoveDirectoryA: 'dirpath_r=lpPathName',
  MoveFileWithProgressW: 'oldfilepath_r=lpExistingFileName newfilepath_r=lpNewFileName flags=dwFlags',
  CopyFileW: 'oldfilepath_r=lpExistingFileName newfilepath_r=lpNewFileName fail_if_exists=bFailIfExists',
  CopyFileA: 'oldfilepath_r=lpExistingFileName newfilepath_r=lpNewFileName fail_if_exists=bFailIfExists',
  CopyFileExW: 'oldfilepath_r=lpExistingFileName newfilepath_r=lpNewFileName flags=dwCopyFlags',
  DeviceIoControl: 'device_handle=hDevice control_code=dwIoControlCode',
  // Processes, their memory and threads
  CreateProcessInternalW: 'filepath_r=lpApplicationName command_line=lpCommandLine creation_flags=dwCreationFlags inherit_handles=bInheritHandles current_directory=lpCurrentDirectory',
  ShellExecuteExW: 'filepath_r=lpFile parameters=lpParameters show_type=nShow',
  NtOpenProcess: 'process_handle=ProcessHandle desired_access=DesiredAccess',
  NtTerminateProcess: 'process_handle=ProcessHandle status_code=ExitStatus',
  NtAllocateVirtualMemory: 'process_handle=ProcessHandle base_address=BaseAddress region_size=#RegionSize allocation_type=AllocationType protection=Protect',
  NtProtectVirtualMemory: 'process_handle=ProcessHandle base_address=BaseAddress length=#RegionSize protection=NewProtect',
  NtWriteVirtualMemory: 'process_handle=ProcessHandle base_address=BaseAddress',
  NtReadVirtualMemory: 'process_handle=ProcessHandle base_address=BaseAddress',
  NtMapViewOfSection: 'section_handle=SectionHandle process_handle=ProcessHandle base_address=BaseAddress commit_size=#CommitSize view_size=#ViewSize allocation_type=AllocationType win32_protect=Win32Protect',
  NtUnmapViewOfSection: 'process_handle=ProcessHandle base_address=BaseAddress',
  WriteProcessMemory: 'process_handle=hProcess base_address=lpBaseAddress',
  ReadProcessMemory: 'process_handle=hProcess base_address=lpBaseAddress',
  CreateThread: 'stack_size=#dwStackSize function_address=lpStartAddress parameter=lpParameter flags=dwCreationFlags thread_identifier=lpThreadId',
  CreateRemoteThread: 'process_handle=hProcess stack_size=#dwStackSize function_address=lpStartAddress parameter=lpParameter flags=dwCreationFlags thread_identifier=lpThreadId',
  CreateRemoteThreadEx: 'process_handle=hProcess stack_size=#dwStackSize function_address=lpStartAddress parameter=lpParameter flags=dwCreationFlags thread_identifier=lpThreadId',
  NtCreateThreadEx: 'thread_handle=ThreadHandle access=DesiredAccess process_handle=ProcessHandle function_address=StartRoutine parameter=Argument suspended=CreateFlags',
  RtlCreateUserThread: 'process_handle=ProcessHandle suspended=CreateSuspended function_address=StartAddress parameter=StartParameter thread_handle=ThreadHandle',
  NtQueueApcThread: 'thread_handle=ThreadHandle function_address=ApcRoutine parameter=ApcArgument1',
  NtSetContextThread: 'thread_handle=ThreadHandle',
  NtGetContextThread: 'thread_handle=ThreadHandle',
  NtResumeThread: 'thread_handle=ThreadHandle',
  NtSuspendThread: 'thread_handle=ThreadHandle',
  CreateToolhelp32Snapshot: 'flags=dwFlags process_identifier=#th32ProcessID',
  Process32FirstW: 'snapshot_handle=hSnapshot',
  Process32NextW: 'snapshot_handle=hSnapshot',
  NtQueryInformationProcess: 'process_handle=ProcessHandle information_class=ProcessInformationClass',
  NtSetInformationThread: 'thread_handle=ThreadHandle information_class=ThreadInformationClass',
  // Synchronisation and the system
  NtCreateMutant: 'mutant_handle=MutantHandle desired_access=DesiredAccess initial_owner=InitialOwner',
  NtOpenMutant: 'mutant_handle=MutantHandle desired_access=DesiredAccess',
  NtDelayExecution: 'milliseconds=#DelayInterval',
  LdrLoadDll: 'flags=Flags module_address=ModuleHandle',
  LdrGetProcedureAddress: 'module_address=ModuleHandle function_name=FunctionName ordinal=#Ordinal function_address=FunctionAddress',
  NtQuerySystemInformation: 'information_class=SystemInformationClass',
  SetWindowsHookExW: 'hook_identifier=idHook callback_function=lpfn module_address=hmod thread_identifier=#dwThreadId',
  SetWindowsHookExA: 'hook_identifier=idHook callback_function=lpfn module_address=hmod thread_identifier=#dwThreadId',
  GetAsyncKeyState: 'key_code=vKey',
  GetKeyState: 'key_code=nVirtKey',
  FindWindowW: 'class_name=lpClassName window_name=lpWindowName',
  FindWindowA: 'class_name=lpClassName window_name=lpWindowName',
  FindWindowExW: 'parent_hwnd=hWndParent child_after_hwnd=hWndChildAfter class_name=lpszClass window_name=lpszWindow',
  FindWindowExA: 'parent_hwnd=hWndParent child_after_hwnd=hWndChildAfter class_name=lpszClass window_name=lpszWindow',
  OutputDebugStringA: 'string=lpOutputString',
  LookupPrivilegeValueW: 'system_name=lpSystemName privilege_name=lpName',
  ExitWindowsEx: 'flags=uFlags reason=dwReason',
  // Registry
  RegOpenKeyExW: 'base_handle=hKey regkey_r=lpSubKey options=ulOptions access=samDesired key_handle=phkResult',
  RegOpenKeyExA: 'base_handle=hKey regkey_r=lpSubKey options=ulOptions access=samDesired key_handle=phkResult',
  RegCreateKeyExW: 'base_handle=hKey regkey_r=lpSubKey class=lpClass options=dwOptions access=samDesired key_handle=phkResult disposition=lpdwDisposition',
  RegCreateKeyExA: 'base_handle=hKey regkey_r=lpSubKey class=lpClass options=dwOptions access=samDesired key_handle=phkResult disposition=lpdwDisposition',
  RegDeleteKeyW: 'key_handle=hKey regkey_r=lpSubKey',
  RegDeleteKeyA: 'key_handle=hKey regkey_r=lpSubKey',
  RegSetValueExW: 'key_handle=hKey regkey_r=lpValueName reg_type=dwType value=lpData',
  RegSetValueExA: 'key_handle=hKey regkey_r=lpValueName reg_type=dwType value=lpData',
  RegQueryValueExW: 'key_handle=hKey regkey_r=lpValueName reg_type=lpType value=lpData',
  RegQueryValueExA: 'key_handle=hKey regkey_r=lpValueName reg_type=lpType value=lpData',
  RegDeleteValueW: 'key_handle=hKey regkey_r=lpValueName',
  RegDeleteValueA: 'key_handle=hKey regkey_r=lpValueName',
  RegEnumKeyExW: 'key_handle=hKey index=#dwIndex key_name=lpName class=lpClass',
  RegEnumValueW: 'key_handle=hKey index=#dwIndex regkey_r=lpValueName reg_type=lpType value=lpData',
  RegCloseKey: 'key_handle=hKey',
  NtCreateKey: 'key_handle=KeyHandle desired_access=DesiredAccess index=TitleIndex options=CreateOptions disposition=Disposition',
  NtOpenKey: 'key_handle=KeyHandle desired_access=DesiredAccess',
  NtOpenKeyEx: 'key_handle=KeyHandle desired_access=DesiredAccess options=OpenOptions',
  NtSetValueKey: 'key_handle=KeyHandle index=TitleIndex reg_type=Type value=Data',
  NtQueryValueKey: 'key_handle=KeyHandle information_class=KeyValueInformationClass',
  NtDeleteValueKey: 'key_handle=KeyHandle',
  NtDeleteKey: 'key_handle=KeyHandle',
  NtQueryKey: 'key_handle=KeyHandle information_class=KeyInformationClass',
  NtEnumerateKey: 'key_handle=KeyHandle index=#Index information_class=KeyInformationClass',
  // Services
  OpenSCManagerW: 'machine_name=lpMachineName database_name=lpDatabaseName desired_access=dwDesiredAccess',
  OpenSCManagerA: 'machine_name=lpMachineName database_name=lpDatabaseName desired_access=dwDesiredAccess',
  CreateServiceW: 'service_manager_handle=hSCManager service_name=lpServiceName display_name=lpDisplayName desired_access=dwDesiredAccess service_type=dwServiceType start_type=dwStartType error_control=dwErrorControl filepath_r=lpBinaryPathName service_start_name=lpServiceStartName password=lpPassword',
  CreateServiceA: 'service_manager_handle=hSCManager service_name=lpServiceName display_name=lpDisplayName desired_access=dwDesiredAccess service_type=dwServiceType start_type=dwStartType error_control=dwErrorControl filepath_r=lpBinaryPathName service_start_name=lpServiceStartName password=lpPassword',
  OpenServiceW: 'service_manager_handle=hSCManager service_name=lpServiceName desired_access=dwDesiredAccess',
  OpenServiceA: 'service_manager_handle=hSCManager service_name=lpServiceName desired_access=dwDesiredAccess',
  StartServiceW: 'service_handle=hService',
  StartServiceA: 'service_handle=hService',
  ControlService: 'service_handle=hService control_code=dwControl',
  DeleteService: 'service_handle=hService',
  // Network
  InternetOpenW: 'user_agent=lpszAgent access_type=dwAccessType proxy_name=lpszProxy proxy_bypass=lpszProxyBypass flags=dwFlags',
  InternetOpenA: 'user_agent=lpszAgent access_type=dwAccessType proxy_name=lpszProxy proxy_bypass=lpszProxyBypass flags=dwFlags',
  InternetConnectW: 'internet_handle=hInternet hostname=lpszServerName port=#nServerPort username=lpszUserName password=lpszPassword service=dwService flags=dwFlags',
  InternetConnectA: 'internet_handle=hInternet hostname=lpszServerName port=#nServerPort username=lpszUserName password=lpszPassword service=dwService flags=dwFlags',
  InternetOpenUrlW: 'internet_handle=hInternet hInternet=hInternet url=lpszUrl headers=lpszHeaders flags=dwFlags',
  InternetOpenUrlA: 'internet_handle=hInternet url=lpszUrl headers=lpszHeaders flags=dwFlags',
  HttpOpenRequestW: 'connect_handle=hConnect http_method=lpszVerb path=lpszObjectName http_version=lpszVersion referer=lpszReferrer flags=dwFlags',
  HttpOpenRequestA: 'connect_handle=hConnect http_method=lpszVerb path=lpszObjectName http_version=lpszVersion referer=lpszReferrer flags=dwFlags',
  HttpSendRequestW: 'request_handle=hRequest headers=lpszHeaders',
  HttpSendRequestA: 'request_handle=hRequest headers=lpszHeaders',
  InternetReadFile: 'request_handle=hFile',
  InternetWriteFile: 'request_handle=hFile',
  URLDownloadToFileW: 'url=szURL filepath_r=szFileName',
  getaddrinfo: 'hostname=pNodeName service_name=pServiceName',
  GetAddrInfoW: 'hostname=pNodeName service_name=pServiceName',
  gethostbyname: 'hostname=name',
  socket: 'af=af type=type protocol=protocol',
  WSASocketW: 'af=af type=type protocol=protocol flags=dwFlags',
  WSASocketA: 'af=af type=type protocol=protocol flags=dwFlags',
  connect: 'socket=s',
  bind: 'socket=s',
  listen: 'socket=s backlog=#backlog',
  accept: 'socket=s',
  send: 'socket=s',
  sendto: 'socket=s flags=flags',
  recv: 'socket=s',
  recvfrom: 'socket=s flags=flags',
  WSASend: 'socket=s',
  WSARecv: 'socket=s',
  closesocket: 'socket=s',
  // Crypto and COM
  CryptAcquireContextW: 'crypto_handle=phProv container=szContainer provider=szProvider provider_type=dwProvType flags=dwFlags',
  CryptGenKey: 'provider_handle=hProv algorithm_identifier=Algid flags=dwFlags crypto_handle=phKey',
  CryptCreateHash: 'provider_handle=hProv algorithm_identifier=Algid crypto_handle=hKey flags=dwFlags hash_handle=phHash',
  CryptEncrypt: 'key_handle=hKey hash_handle=hHash final=Final flags=dwFlags',
  CryptDecrypt: 'key_handle=hKey hash_handle=hHash final=Final flags=dwFlags',
  CryptHashData: 'hash_handle=hHash flags=dwFlags',
  CryptProtectData: 'description=szDataDescr flags=dwFlags',
  CryptUnprotectData: 'flags=dwFlags',
  CoCreateInstance: 'clsid=rclsid class_context=dwClsContext iid=riid',
  CoCreateInstanceEx: 'clsid=Clsid class_context=dwClsCtx',
};

/** The monitor's categories that Cuckoo's older reports, and a Wine task's calls, name otherwise. */
const CATEGORIES: Record<string, WindowsCallCategory> = {
  file: 'filesystem',
  iexplore: 'browser',
  ole: 'com',
  office: 'misc',
  __notification__: 'misc',
};

const KNOWN_CATEGORIES = new Set<string>([
  'filesystem', 'registry', 'process', 'threading', 'network', 'services', 'synchronisation', 'system', 'hooking', 'misc',
  'crypto', 'ui', 'device', 'browser', 'certificate', 'resource', 'com', 'exception', 'netapi',
]);

const renames = new Map<string, Renames>(
  Object.entries(RENAMES).map(([api, pairs]) => [api, Object.fromEntries(pairs.split(' ').map((pair) => pair.split('=') as [string, string]))]),
);

/** The documented name (with `#` for a count) an argument of the monitor's stands for; undefined keeps its own. */
export function documentedName(api: string, monitorName: string): string | undefined {
  return renames.get(api)?.[monitorName];
}

/**
 * A call's category: a Wine task's for the same API, so both kinds of task sort a call alike; else the
 * monitor's, in the names a Wine task uses.
 */
export function monitorCategory(api: string, monitorCategory: string | undefined): WindowsCallCategory {
  const known = windowsApi(api)?.category;
  if (known) return known;
  if (api === '__exception__') return 'exception';
  const category = CATEGORIES[monitorCategory ?? ''] ?? monitorCategory ?? 'misc';
  return KNOWN_CATEGORIES.has(category) ? (category as WindowsCallCategory) : 'misc';
}

/** The DLL a Wine task names for the API, else `ntdll` for the native calls; '' when unknown (the monitor does not say). */
export function monitorModule(api: string): string {
  return windowsApi(api)?.module ?? (/^(Nt|Ldr|Rtl)[A-Z]/.test(api) ? 'ntdll' : '');
}
