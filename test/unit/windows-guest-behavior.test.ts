import assert from 'node:assert/strict';
import { existsSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { EVENTS_FILE } from '../../src/report/events.js';
import type { BehaviorSection, Call, SignatureMatch } from '../../src/report/report-types.js';
import { runSignatures } from '../../src/signatures/index.js';
import { behaviorSectionOf } from '../helpers/behavior-section.js';
import { MonitorLogWriter } from '../helpers/cuckoo-monitor-log.js';
import { baseReport, emptyNetwork, makeAnalysis } from '../helpers/signatures.js';

/**
 * A Windows guest's task folder as the result server leaves it: no logs/events.jsonl, one logs/<pid>.bson
 * per process Cuckoo's monitor watched. The logs come from a test double of Cuckoo 2.0.7's monitor
 * (test/helpers/cuckoo-monitor-log.ts), since no Windows guest exists here. Processing gives them the
 * behaviour section a Wine task gets, and the Windows signatures read them.
 */

const START_MS = Date.UTC(2026, 10, 27, 8, 31, 0);
const SAMPLE = 'C:\\Users\\abecker\\AppData\\Local\\Temp\\invoice.exe';
const DROPPED = 'C:\\Users\\abecker\\AppData\\Roaming\\svchost32.exe';
const RUN_VALUE = 'HKEY_CURRENT_USER\\Software\\Microsoft\\Windows\\CurrentVersion\\Run\\svchost32';

/** The sample: drops a program, fetches a URL, starts the program, injects into explorer.exe. */
function sampleLog(): MonitorLogWriter {
  return new MonitorLogWriter({ pid: 2760, ppid: 2200, modulePath: SAMPLE, commandLine: `"${SAMPLE}"`, startMs: START_MS })
    .call('NtCreateMutant', [['mutant_handle', 0x40, 'p'], ['desired_access', 0x1f0001, 'i'], ['initial_owner', 0, 'i'], ['mutant_name', 'Local\\invoice-once']], { t: 4, category: 'synchronisation' })
    .call('LdrLoadDll', [['flags', 0, 'i'], ['module_address', 0x76f00000, 'p'], ['module_name', 'wininet.dll'], ['basename', 'wininet'], ['stack_pivoted', 0, 'i']], { t: 6, category: 'system', ret: 0 })
    .call('InternetConnectA', [['internet_handle', 0xcc0004, 'p'], ['hostname', 'update.example.test'], ['port', 80, 'i'], ['username', ''], ['password', ''], ['service', 3, 'i'], ['flags', 0, 'i']], { t: 8, category: 'network', ret: 0xcc0008 })
    .call('InternetOpenUrlA', [['internet_handle', 0xcc0004, 'p'], ['url', 'http://update.example.test/svc.bin'], ['flags', 0x84000000, 'i'], ['headers', '']], { t: 9, category: 'network', ret: 0xcc000c })
    .call('NtCreateFile', [['file_handle', 0x1a4, 'p'], ['desired_access', 0x40110080, 'x'], ['file_attributes', 128, 'i'], ['create_disposition', 5, 'i'], ['create_options', 96, 'i'], ['share_access', 0, 'i'], ['filepath', DROPPED], ['filepath_r', '\\??\\' + DROPPED], ['status_info', 2, 'i']], { t: 12, category: 'file', ret: 0 })
    .call('NtWriteFile', [['file_handle', 0x1a4, 'p'], ['buffer', Buffer.from('MZ\x90\x00')], ['offset', 0, 'p'], ['filepath', DROPPED]], { t: 13, category: 'file', ret: 0 })
    .call('CreateProcessInternalW', [['command_line', `"${DROPPED}" -k`], ['inherit_handles', 0, 'i'], ['current_directory', ''], ['filepath', DROPPED], ['filepath_r', DROPPED], ['creation_flags', 0, 'i'], ['process_identifier', 2900, 'i'], ['thread_identifier', 2904, 'i'], ['process_handle', 0x1b0, 'p'], ['thread_handle', 0x1b4, 'p'], ['track', 1, 'i'], ['stack_pivoted', 0, 'i']], { t: 20, category: 'process' })
    .call('WriteProcessMemory', [['process_handle', 0x1c0, 'p'], ['base_address', 0x3b0000, 'p'], ['process_identifier', 1412, 'i'], ['buffer', Buffer.from('\xfc\xe8\x82')]], { t: 30, category: 'process' })
    .call('CreateRemoteThread', [['process_handle', 0x1c0, 'p'], ['stack_size', 0, 'i'], ['function_address', 0x3b0000, 'p'], ['parameter', 0, 'p'], ['flags', 0, 'i'], ['thread_identifier', 3000, 'i'], ['process_identifier', 1412, 'i']], { t: 31, category: 'process', ret: 0x1c8 });
}

/** The program it started: reads the registry and sleeps. */
function childLog(): MonitorLogWriter {
  return new MonitorLogWriter({ pid: 2900, ppid: 2760, modulePath: DROPPED, commandLine: `"${DROPPED}" -k`, startMs: START_MS + 21 })
    .call('RegOpenKeyExW', [['base_handle', 0x80000002, 'p'], ['regkey_r', 'SOFTWARE\\Microsoft\\Cryptography'], ['options', 0, 'i'], ['access', 0x20019, 'i'], ['key_handle', 0x88, 'p'], ['regkey', 'HKEY_LOCAL_MACHINE\\SOFTWARE\\Microsoft\\Cryptography']], { t: 2, category: 'registry', ret: 0 })
    .call('RegQueryValueExW', [['key_handle', 0x88, 'p'], ['regkey_r', 'MachineGuid'], ['reg_type', 1, 'i'], ['value', '6ba7b810-9dad-11d1-80b4-00c04fd430c8'], ['regkey', 'HKEY_LOCAL_MACHINE\\SOFTWARE\\Microsoft\\Cryptography\\MachineGuid']], { t: 3, category: 'registry', ret: 0 })
    .call('NtDelayExecution', [['milliseconds', 60000, 'i'], ['skipped', 0, 'i']], { t: 4, category: 'synchronisation', ret: 0 });
}

/** explorer.exe, which the monitor followed into after the injection: the injected code persists the dropped program. */
function explorerLog(): MonitorLogWriter {
  return new MonitorLogWriter({ pid: 1412, ppid: 1388, modulePath: 'C:\\Windows\\explorer.exe', commandLine: 'C:\\Windows\\Explorer.EXE', startMs: START_MS + 32 })
    .call('RegSetValueExW', [['key_handle', 0x80000001, 'p'], ['regkey_r', 'svchost32'], ['reg_type', 1, 'i'], ['value', `"${DROPPED}" -k`], ['regkey', RUN_VALUE]], { t: 1, tid: 1500, category: 'registry', ret: 0 })
    .anomaly('unhook', 'NtCreateFile', 'Function hook was modified!', 2);
}


describe('a Windows guest\'s behaviour logs in the report', () => {
  const analysis = makeAnalysis();
  let section: BehaviorSection;
  let signatures: SignatureMatch[];
  before(async () => {
    for (const log of [sampleLog(), childLog(), explorerLog()]) writeFileSync(join(analysis.paths.logs, `${log.process.pid}.bson`), log.bytes());
    assert.equal(existsSync(join(analysis.paths.dir, EVENTS_FILE)), false, 'a guest\'s task has no Linux event log');
    section = await behaviorSectionOf(analysis.paths);
    signatures = await runSignatures(baseReport(analysis.paths.binary, { behavior: section, network: emptyNetwork() }), analysis.paths);
  });
  after(() => analysis.remove());

  const processOf = (pid: number) => section.processes.find((process) => process.pid === pid)!;

  it('lists the processes as Cuckoo does: the guest\'s pids, their programs, command lines, first seen and modules', () => {
    assert.deepEqual(section.processes.map((process) => [process.pid, process.ppid, process.process_name, process.process_path, process.command_line, process.first_seen]), [
      [2760, 2200, 'invoice.exe', SAMPLE, `"${SAMPLE}"`, START_MS / 1000],
      [2900, 2760, 'svchost32.exe', DROPPED, `"${DROPPED}" -k`, START_MS / 1000 + 0.021],
      [1412, 1388, 'explorer.exe', 'C:\\Windows\\explorer.exe', 'C:\\Windows\\Explorer.EXE', START_MS / 1000 + 0.032],
    ], 'in the order they were first seen, as Cuckoo sorts them');
    assert.deepEqual(processOf(2760).modules, [{ basename: 'ntdll.dll', filepath: 'C:\\Windows\\SYSTEM32\\ntdll.dll', baseaddr: '0x77a00000', imgsize: 1200128 }]);
    const tree = section.processtree.map((node) => [node.pid, node.children.map((child) => child.pid)]);
    assert.deepEqual(tree, [[2760, [2900]], [1412, []]], 'the tree by first seen; explorer.exe started before the analysis, so it is a root');
  });

  it('gives each process its calls in Cuckoo\'s shape, in time order', () => {
    const calls = processOf(2760).calls;
    assert.deepEqual(calls.map((call) => call.api), ['NtCreateMutant', 'LdrLoadDll', 'InternetConnectA', 'InternetOpenUrlA', 'NtCreateFile', 'NtWriteFile', 'CreateProcessInternalW', 'WriteProcessMemory', 'CreateRemoteThread']);
    assert.deepEqual(calls.find((call) => call.api === 'CreateProcessInternalW'), {
      api: 'CreateProcessInternalW',
      category: 'process',
      time: START_MS / 1000 + 0.02,
      tid: 1,
      status: true,
      return_value: 1,
      arguments: {
        lpCommandLine: `"${DROPPED}" -k`,
        bInheritHandles: '0x00000000',
        lpCurrentDirectory: '',
        filepath: DROPPED,
        lpApplicationName: DROPPED,
        dwCreationFlags: '0x00000000',
        process_identifier: 2900,
        thread_identifier: 2904,
        process_handle: '0x000001b0',
        thread_handle: '0x000001b4',
        track: 1,
        stack_pivoted: 0,
      },
      repeated: 0,
    });
    assert.deepEqual(processOf(2900).calls.map((call) => [call.api, call.category]), [['RegOpenKeyExW', 'registry'], ['RegQueryValueExW', 'registry'], ['NtDelayExecution', 'synchronisation']]);
    assert.deepEqual(section.apistats['2760']!.NtCreateFile, 1);
    assert.deepEqual(section.apistats['1412'], { RegSetValueExW: 1 });
  });

  it('fills Cuckoo\'s Windows summary keys from the calls', () => {
    const { summary } = section;
    assert.deepEqual(summary.file_created, [DROPPED]);
    assert.deepEqual(summary.file_written, [DROPPED]);
    assert.deepEqual(summary.regkey_written, [RUN_VALUE]);
    assert.deepEqual(summary.regkey_opened, ['HKEY_LOCAL_MACHINE\\SOFTWARE\\Microsoft\\Cryptography']);
    assert.deepEqual(summary.regkey_read, ['HKEY_LOCAL_MACHINE\\SOFTWARE\\Microsoft\\Cryptography\\MachineGuid']);
    assert.deepEqual(summary.mutex, ['Local\\invoice-once']);
    assert.deepEqual(summary.dll_loaded, ['wininet.dll']);
    assert.deepEqual(summary.connects_host, ['update.example.test']);
    assert.deepEqual(summary.fetches_url, ['http://update.example.test/svc.bin']);
    assert.deepEqual(summary.command_line, [`"${SAMPLE}"`, `"${DROPPED}" -k`, 'C:\\Windows\\Explorer.EXE']);
    assert.deepEqual(section.generic.find((entry) => entry.pid === 2900)!.summary.regkey_read, ['HKEY_LOCAL_MACHINE\\SOFTWARE\\Microsoft\\Cryptography\\MachineGuid']);
  });

  it('lists the monitor\'s anomalies', () => {
    assert.deepEqual(section.anomaly, [{ category: 'unhook', funcname: 'NtCreateFile', message: 'Function hook was modified!' }]);
  });

  it('fires the Windows signatures on a guest\'s calls, also in a process named like one of Wine\'s own (explorer.exe)', () => {
    const runKey = signatures.find((match) => match.name === 'win_persistence_run_key');
    assert.ok(runKey, `fired: ${signatures.map((match) => match.name).join(', ')}`);
    assert.ok(runKey.marks.some((mark) => mark.type === 'call' && mark.pid === 1412 && (mark.call as Call).api === 'RegSetValueExW'));
    const injection = signatures.find((match) => match.name === 'win_process_injection');
    assert.ok(injection, `fired: ${signatures.map((match) => match.name).join(', ')}`);
    assert.deepEqual(injection.marks.map((mark) => mark.type === 'call' && (mark.call as Call).api), ['WriteProcessMemory', 'CreateRemoteThread']);
  });
});
