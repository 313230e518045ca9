import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { windowsCommandLine } from '../../src/report/command-line.js';
import { relayFromExcludeList, relayIncludeList, WINDOWS_APIS, windowsApi } from '../../src/report/windows-apis.js';
import { RelayDecoder, signedValue, type WindowsCall } from '../../src/report/wine-calls.js';
import { predefinedKey, RegistryKeys, win32KeyPath } from '../../src/report/wine-registry-keys.js';
import { parseRelayLine, relayArgs } from '../../src/report/wine-relay-line.js';

/**
 * Wine's relay output read into Windows calls. The fixture is a real log: Debian's wine64 8.0 running a
 * mingw-w64 probe (test/fixtures/wine/probe.c) with the channels the machine sets (+pid, +timestamp,
 * +relay, +reg, +process) and RelayInclude from relayIncludeList(); only Wine's time-zone enumeration at
 * start-up was cut out of it.
 */

const FIXTURE = join(import.meta.dirname, '../../../test/fixtures/wine');

function decodeFixture(): { calls: WindowsCall[]; decoder: RelayDecoder } {
  const decoder = new RelayDecoder();
  const calls: WindowsCall[] = [];
  for (const line of readFileSync(join(FIXTURE, 'probe64-relay.log'), 'utf8').split('\n')) calls.push(...decoder.line(line));
  calls.push(...decoder.unfinished());
  return { calls, decoder };
}

describe('relay lines', () => {
  it('reads arguments with the strings Wine showed, commas, spaces, quotes and escapes included', () => {
    const args = relayArgs('0021faa0 L"C:\\\\a, b\\\\\\"q\\".txt",40000000,14000a0be "x\\ty"...,(nil),00000000) ret=1');
    assert.deepEqual(args, [
      { hex: '0021faa0', text: 'C:\\a, b\\"q".txt' },
      { hex: '40000000' },
      { hex: '14000a0be', text: 'x\ty' },
      { hex: '(nil)' },
      { hex: '00000000' },
    ]);
  });

  it('tells calls, returns, key requests, key handles and created processes apart, with Wine ids and ticks', () => {
    const call = parseRelayLine('62714.845:0158:015c:Call KERNEL32.CreateMutexW(00000000,00000000,14000a000 L"Global\\\\m") ret=1400015f3');
    assert.deepEqual(call, {
      tick: 62714.845,
      winpid: 0x158,
      wintid: 0x15c,
      kind: 'call',
      module: 'KERNEL32',
      api: 'CreateMutexW',
      args: [{ hex: '00000000' }, { hex: '00000000' }, { hex: '14000a000', text: 'Global\\m' }],
    });
    assert.deepEqual(parseRelayLine('62714.845:0158:015c:Ret  KERNEL32.CreateMutexW() retval=00000070 ret=1400015f3'), {
      tick: 62714.845, winpid: 0x158, wintid: 0x15c, kind: 'ret', module: 'KERNEL32', api: 'CreateMutexW', retval: '00000070',
    });
    const request = parseRelayLine('62714.852:0158:015c:trace:reg:NtCreateKey (0x28,L"Software\\\\Microsoft\\\\Windows NT\\\\Run",(null),0,f003f,0x21ea08)');
    assert.deepEqual(request, { tick: 62714.852, winpid: 0x158, wintid: 0x15c, kind: 'key-request', root: '28', name: 'Software\\Microsoft\\Windows NT\\Run' });
    const absolute = parseRelayLine('1.000:0020:0024:trace:reg:NtOpenKeyEx ((nil),L"\\\\Registry\\\\Machine\\\\Software",20019,0x7ffd)');
    assert.equal(absolute?.kind === 'key-request' && absolute.root, '0');
    assert.deepEqual(parseRelayLine('1.000:0020:0024:trace:reg:NtOpenKeyEx <- (nil)'), { tick: 1, winpid: 0x20, wintid: 0x24, kind: 'key-handle', handle: undefined });
    assert.deepEqual(parseRelayLine('1.000:0020:0024:trace:reg:NtOpenKeyEx <- 0x3c'), { tick: 1, winpid: 0x20, wintid: 0x24, kind: 'key-handle', handle: '3c' });
    const created = parseRelayLine('62714.891:0158:015c:trace:process:NtCreateUserProcess L"\\\\??\\\\C:\\\\users\\\\Public\\\\x.exe" pid 0160 tid 0164 handles 0x88/0x8c');
    assert.deepEqual(created, {
      tick: 62714.891, winpid: 0x158, wintid: 0x15c, kind: 'process-created', image: 'C:\\users\\Public\\x.exe', childWinpid: 0x160, processHandle: '88', threadHandle: '8c',
    });
    // Wine's own entry points and other channels are no calls; lines without the header are not Wine's.
    assert.equal(parseRelayLine('62714.820:0158:015c:Call PE DLL (proc=0000000170068C10,module=0000000170000000 L"ntdll.dll",reason=PROCESS_ATTACH,res=000000000021FB00)')?.kind, 'other');
    assert.equal(parseRelayLine('wine: created the configuration directory'), undefined);
  });

  it('reads return values as the caller saw them: 32-bit values and 64-bit ones signed', () => {
    assert.equal(signedValue('ffffffff'), -1);
    assert.equal(signedValue('ffffffffffffffff'), -1);
    assert.equal(signedValue('170000000'), 0x170000000);
    assert.equal(signedValue('00000078'), 0x78);
  });
});

describe('the Windows API table', () => {
  it('has the calls that matter for malware analysis, each with a Cuckoo category and argument names', () => {
    const wanted = [
      'CreateFileW', 'CreateFileA', 'WriteFile', 'DeleteFileW', 'MoveFileExW', 'CopyFileW', 'CreateProcessInternalW', 'CreateProcessW', 'CreateProcessA',
      'ShellExecuteExW', 'WinExec', 'OpenProcess', 'VirtualAllocEx', 'WriteProcessMemory', 'CreateRemoteThread', 'CreateRemoteThreadEx', 'NtCreateThreadEx',
      'ResumeThread', 'SetThreadContext', 'RegCreateKeyExW', 'RegCreateKeyExA', 'RegOpenKeyExW', 'RegOpenKeyExA', 'RegSetValueExW', 'RegSetValueExA',
      'RegQueryValueExW', 'RegQueryValueExA', 'RegDeleteKeyW', 'RegDeleteValueW', 'CreateMutexW', 'CreateMutexA', 'OpenMutexW', 'LoadLibraryW', 'LoadLibraryA',
      'LoadLibraryExW', 'GetProcAddress', 'IsDebuggerPresent', 'CheckRemoteDebuggerPresent', 'GetTickCount', 'Sleep', 'socket', 'connect', 'send', 'recv',
      'gethostbyname', 'getaddrinfo', 'InternetOpenW', 'InternetOpenA', 'InternetOpenUrlW', 'InternetOpenUrlA', 'InternetConnectW', 'HttpOpenRequestW',
      'HttpSendRequestW', 'URLDownloadToFileW', 'URLDownloadToFileA', 'WinHttpOpen', 'WinHttpConnect', 'WinHttpSendRequest', 'CryptEncrypt',
      'CryptAcquireContextW', 'SetWindowsHookExW', 'SetWindowsHookExA', 'GetAsyncKeyState', 'GetKeyState', 'OpenSCManagerW', 'CreateServiceW',
      'StartServiceW', 'FindFirstFileW', 'FindNextFileW', 'GetComputerNameW', 'GetUserNameW', 'CoCreateInstance',
    ];
    for (const name of wanted) assert.ok(windowsApi(name), `${name} is in the table`);
    const categories = new Set(['filesystem', 'registry', 'process', 'threading', 'network', 'services', 'synchronisation', 'system', 'hooking', 'misc', 'crypto', 'ui', 'device', 'browser', 'certificate', 'resource', 'com', 'exception', 'netapi']);
    for (const api of WINDOWS_APIS.values()) {
      assert.ok(categories.has(api.category), `${api.name}: ${api.category}`);
      assert.match(api.module, /^[a-z0-9_]+$/);
    }
    assert.equal(windowsApi('RegSetValueExW')?.category, 'registry');
    assert.equal(windowsApi('VirtualAllocEx')?.module, 'kernel32');
    assert.deepEqual(windowsApi('WriteFile')?.args, ['hFile', 'lpBuffer', '#nNumberOfBytesToWrite', 'lpNumberOfBytesWritten', 'lpOverlapped']);
  });

  it('gives Wine RelayInclude entries for each call, kernel32 and advapi32 ones also under kernelbase', () => {
    const include = relayIncludeList();
    for (const entry of ['kernel32.CreateFileW', 'kernelbase.CreateFileW', 'advapi32.RegSetValueExW', 'kernelbase.RegSetValueExW', 'ws2_32.connect', 'wininet.InternetOpenUrlA', 'ntdll.NtCreateThreadEx', 'user32.SetWindowsHookExW']) {
      assert.ok(include.includes(entry), entry);
    }
    assert.equal(new Set(include).size, include.length, 'no entry twice');
    for (const entry of include) assert.match(entry, /^[a-z0-9_]+\.\w+$/);
    const fromExclude = relayFromExcludeList();
    assert.ok(fromExclude.includes('kernelbase') && fromExclude.includes('ntdll'));
    assert.ok(!fromExclude.includes('msvcrt') && !fromExclude.includes('ucrtbase'), "the C runtime's calls stay traced");
  });
});

describe('registry key handles', () => {
  it("names keys the Windows way, the user's own hive as HKEY_CURRENT_USER", () => {
    assert.equal(win32KeyPath('\\Registry\\Machine\\Software\\Microsoft'), 'HKEY_LOCAL_MACHINE\\Software\\Microsoft');
    assert.equal(win32KeyPath('\\Registry\\User\\S-1-5-21-0-0-0-1000\\Software\\Wine'), 'HKEY_CURRENT_USER\\Software\\Wine');
    assert.equal(win32KeyPath('\\Registry\\User\\.Default\\Control Panel'), 'HKEY_USERS\\.Default\\Control Panel');
    assert.equal(predefinedKey('ffffffff80000001'), 'HKEY_CURRENT_USER');
    assert.equal(predefinedKey('80000002'), 'HKEY_LOCAL_MACHINE');
    assert.equal(predefinedKey('0000003c'), undefined);
  });

  it('follows handles from the key asked for to the handle given, per thread, and forgets failed opens', () => {
    const keys = new RegistryKeys();
    keys.request(1, '0', '\\Registry\\User\\S-1-5-21-0-0-0-1000');
    keys.request(2, '0', '\\Registry\\Machine');
    assert.equal(keys.given(1, '28'), 'HKEY_CURRENT_USER');
    assert.equal(keys.given(2, '1c'), 'HKEY_LOCAL_MACHINE');
    keys.request(1, '28', 'Software\\Run');
    keys.given(1, '3c');
    assert.equal(keys.pathOf('0000003c'), 'HKEY_CURRENT_USER\\Software\\Run');
    keys.request(1, '1c', 'Nowhere');
    assert.equal(keys.given(1, undefined), undefined);
    keys.request(1, '99', 'Under an unknown root');
    assert.equal(keys.given(1, '40'), undefined);
    assert.equal(keys.pathOf('40'), undefined);
  });
});

describe('Windows calls from the real relay log', () => {
  const { calls, decoder } = decodeFixture();
  const of = (api: string) => calls.filter((call) => call.api === api);

  it("decodes the probe's calls in order, with documented argument names, return values and success", () => {
    const names = calls.filter((call) => call.winpid === 0x158).map((call) => call.api);
    const probe = ['GetComputerNameW', 'GetUserNameW', 'IsDebuggerPresent', 'GetTickCount', 'CreateMutexW', 'OpenMutexW', 'CreateFileW', 'WriteFile', 'CopyFileW', 'MoveFileExW', 'DeleteFileW', 'CreateFileA', 'FindFirstFileW'];
    assert.deepEqual(names.slice(names.indexOf('GetComputerNameW'), names.indexOf('GetComputerNameW') + probe.length), probe);
    const [create] = of('CreateFileW');
    assert.equal(create!.module, 'kernel32');
    assert.equal(create!.category, 'filesystem');
    assert.deepEqual(create!.args, {
      lpFileName: 'C:\\users\\root\\AppData\\Roaming\\probe.txt', dwDesiredAccess: '0x40000000', dwShareMode: '0x00000000', lpSecurityAttributes: '0x00000000',
      dwCreationDisposition: '0x00000002', dwFlagsAndAttributes: '0x00000080', hTemplateFile: '0x00000000',
      filepath: 'C:\\users\\root\\AppData\\Roaming\\probe.txt',
    });
    assert.equal(create!.ret, 0x78);
    assert.equal(create!.status, true);
    const [write] = of('WriteFile');
    assert.equal(write!.args.nNumberOfBytesToWrite, 5);
    assert.equal(write!.args.filepath, 'C:\\users\\root\\AppData\\Roaming\\probe.txt', 'the file behind the handle');
    const [missing] = of('CreateFileA');
    assert.equal(missing!.ret, -1);
    assert.equal(missing!.status, false);
    const [connect] = of('connect');
    assert.equal(connect!.status, false, 'nothing listens on the port: SOCKET_ERROR');
    assert.equal(of('RegSetValueExW')[0]!.status, true, 'ERROR_SUCCESS is 0');
  });

  it('gives registry calls the full key path, though relay never shows the handle an open call returned', () => {
    assert.deepEqual(of('RegSetValueExW').map((call) => call.args.regkey), [
      'HKEY_CURRENT_USER\\Software\\Microsoft\\Windows\\CurrentVersion\\Run\\probe',
      'HKEY_CURRENT_USER\\Software\\ProbeVendor\\Settings\\installed',
    ]);
    assert.equal(of('RegQueryValueExA')[0]!.args.regkey, 'HKEY_LOCAL_MACHINE\\SOFTWARE\\Microsoft\\Windows NT\\CurrentVersion\\ProductName');
    assert.equal(of('RegCreateKeyExW')[0]!.args.key_handle, '0x78');
    assert.equal(of('RegDeleteKeyW')[0]!.args.regkey, 'HKEY_CURRENT_USER\\Software\\ProbeVendor\\Settings');
  });

  it('names the process a process or thread handle designates, from the handles CreateProcess gave', () => {
    assert.equal(of('VirtualAllocEx')[0]!.args.process_identifier, 0x160);
    assert.equal(of('WriteProcessMemory')[0]!.args.process_identifier, 0x160);
    assert.equal(of('ResumeThread')[0]!.args.process_identifier, 0x160, 'the thread handle');
    assert.deepEqual(of('MoveFileExW')[0]!.args.newfilepath, 'C:\\users\\root\\Temp\\probe-moved.txt');
  });

  it('keeps only the low 32 bits of 32-bit arguments, whose register upper half 64-bit relay prints as found', () => {
    const decoder = new RelayDecoder();
    decoder.line('1.000:0020:0024:Call KERNEL32.CreateProcessW(00000000,0021ed70 L"a.exe",00000000,00000000,52454b2000000000,65532e3200000004,00000000,00000000,0021f1d0,0021f1b0) ret=140001b36');
    decoder.line('1.000:0020:0024:Call KERNEL32.VirtualAllocEx(ffffffffffffffff,00000000,100000000,00003000,52454b2000000040) ret=140001c18');
    const [allocation] = decoder.line('1.001:0020:0024:Ret  KERNEL32.VirtualAllocEx() retval=00340000 ret=140001c18');
    const [start] = decoder.line('1.002:0020:0024:Ret  KERNEL32.CreateProcessW() retval=00000001 ret=140001b36');
    assert.equal(start!.args.bInheritHandles, '0x00000000');
    assert.equal(start!.args.dwCreationFlags, '0x00000004');
    assert.equal(allocation!.args.flProtect, '0x00000040');
    assert.equal(allocation!.args.dwSize, 0x100000000, 'SIZE_T stays whole');
    assert.equal(allocation!.args.process_identifier, 0x20, "GetCurrentProcess's pseudo-handle is the caller");
  });

  it('knows the child the probe started: its program and its creator; calls that never returned end the log', () => {
    assert.equal(decoder.imageOf(0x158), 'probe64.exe');
    assert.equal(decoder.imageOf(0x160), 'C:\\users\\Public\\probe64.exe');
    assert.equal(decoder.creatorOf(0x160), 0x158);
    assert.deepEqual(of('Sleep').map((call) => [call.winpid, call.args.dwMilliseconds]), [[0x160, 10], [0x158, 20]]);
    const exits = of('ExitProcess');
    assert.deepEqual(exits.map((call) => [call.winpid, call.args.uExitCode, call.status]), [[0x160, '0x00000003', true], [0x158, '0x00000000', true]]);
  });
});

describe('Windows command lines', () => {
  it('quotes arguments the way Microsoft C runtimes parse them', () => {
    assert.equal(windowsCommandLine(['C:\\Program Files\\a.exe', 'plain', '', 'say "hi"', 'C:\\dir with space\\']), '"C:\\Program Files\\a.exe" plain "" "say \\"hi\\"" "C:\\dir with space\\\\"');
  });
});
