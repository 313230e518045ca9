import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { serialize } from 'bson';
import type { BehaviorEvent } from '../../src/report/events.js';
import { monitorLogStreams } from '../../src/report/monitor-log-stream.js';
import { MonitorLogWriter } from '../helpers/cuckoo-monitor-log.js';

/**
 * Decoding a Windows guest's behaviour logs (logs/<pid>.bson). The logs are written by a test double of
 * Cuckoo 2.0.7's monitor (test/helpers/cuckoo-monitor-log.ts), which follows the monitor's log format,
 * because no Windows guest, and so no real monitor, exists here.
 */

const START_MS = Date.UTC(2026, 10, 27, 8, 30, 0, 250);
const START = START_MS / 1000;

let root: string;
before(() => {
  root = mkdtempSync(join(tmpdir(), 'nestbox-monitor-log-'));
});
after(() => rmSync(root, { recursive: true, force: true }));

let folders = 0;
/** A task folder holding the given logs (name -> bytes). */
function taskWith(logs: Record<string, Buffer>): string {
  const dir = join(root, `task-${++folders}`);
  mkdirSync(join(dir, 'logs'), { recursive: true });
  for (const [name, bytes] of Object.entries(logs)) writeFileSync(join(dir, 'logs', name), bytes);
  return dir;
}

/** Every event of a task folder's logs, each stream read to its end. */
async function eventsOf(dir: string, maxDocumentBytes?: number): Promise<BehaviorEvent[]> {
  const events: BehaviorEvent[] = [];
  for (const stream of await monitorLogStreams(dir, { maxDocumentBytes })) {
    assert.equal(stream.ownLog, true, 'a guest\'s logs are a behaviour log of their own');
    for (let batch = await stream.read(); batch.length > 0; batch = await stream.read()) events.push(...batch);
  }
  return events;
}

function sample(pid = 2760, is64bit = false): MonitorLogWriter {
  return new MonitorLogWriter({ pid, ppid: 1412, modulePath: 'C:\\Users\\abecker\\AppData\\Local\\Temp\\invoice.exe', commandLine: '"C:\\Users\\abecker\\AppData\\Local\\Temp\\invoice.exe" /q', startMs: START_MS, is64bit });
}

const calls = (events: BehaviorEvent[]) => events.filter((event): event is Extract<BehaviorEvent, { kind: 'win.call' }> => event.kind === 'win.call');
const anomalies = (events: BehaviorEvent[]) => events.filter((event) => event.kind === 'win.anomaly').map((event) => (event as { message: string }).message);

describe('a Windows guest\'s behaviour log (Cuckoo\'s monitor\'s BSON)', () => {
  it('gives the process from __process__ and each call with its time, thread, status, return value and named arguments', async () => {
    const log = sample()
      .call('NtCreateFile', [['file_handle', 0x1a4, 'p'], ['desired_access', 0x40100080, 'x'], ['file_attributes', 128, 'i'], ['create_disposition', 5, 'i'], ['create_options', 96, 'i'], ['share_access', 0, 'i'], ['filepath', 'C:\\Users\\abecker\\AppData\\Roaming\\svc.exe'], ['filepath_r', '\\??\\C:\\Users\\abecker\\AppData\\Roaming\\svc.exe'], ['status_info', 2, 'i']], { t: 15, tid: 2764, category: 'file' })
      .call('RegSetValueExW', [['key_handle', 0x80000001, 'p'], ['regkey_r', 'Updater'], ['reg_type', 1, 'i'], ['value', 'C:\\Users\\abecker\\AppData\\Roaming\\svc.exe'], ['regkey', 'HKEY_CURRENT_USER\\Software\\Microsoft\\Windows\\CurrentVersion\\Run\\Updater']], { t: 40, tid: 2764, category: 'registry', ret: 0 })
      .call('NtOpenMutant', [['mutant_handle', 0, 'p'], ['desired_access', 0x1f0001, 'i'], ['mutant_name', 'Global\\nbx-once']], { t: 41, tid: 2768, ok: false, ret: -1073741772, category: 'synchronisation' });
    const events = await eventsOf(taskWith({ '2760.bson': log.bytes() }));
    const [process, ...rest] = events;
    assert.deepEqual(process, {
      kind: 'win.process',
      ts: START,
      pid: 2760,
      ppid: 1412,
      tid: 0,
      comm: 'invoice.exe',
      path: 'C:\\Users\\abecker\\AppData\\Local\\Temp\\invoice.exe',
      command_line: '"C:\\Users\\abecker\\AppData\\Local\\Temp\\invoice.exe" /q',
      is64bit: false,
      track: true,
      modules: [{ basename: 'ntdll.dll', filepath: 'C:\\Windows\\SYSTEM32\\ntdll.dll', baseaddr: '0x77a00000', imgsize: 1200128 }],
    });
    const [create, setValue, mutant] = calls(rest);
    assert.equal(calls(rest).length, 3);
    assert.deepEqual(
      { ts: create!.ts, pid: create!.pid, ppid: create!.ppid, tid: create!.tid, comm: create!.comm, winpid: create!.winpid, wintid: create!.wintid },
      { ts: START + 0.015, pid: 2760, ppid: 1412, tid: 2764, comm: 'invoice.exe', winpid: 2760, wintid: 2764 },
      'the guest\'s own ids; the time counted from the process\'s start',
    );
    assert.deepEqual(
      { api: create!.api, module: create!.module, category: create!.category, status: create!.status, ret: create!.ret },
      { api: 'NtCreateFile', module: 'ntdll', category: 'filesystem', status: true, ret: 1 },
    );
    assert.deepEqual(create!.args, {
      FileHandle: '0x000001a4',
      DesiredAccess: '0x40100080',
      FileAttributes: '0x00000080',
      CreateDisposition: '0x00000005',
      CreateOptions: '0x00000060',
      ShareAccess: '0x00000000',
      filepath: 'C:\\Users\\abecker\\AppData\\Roaming\\svc.exe',
      filepath_r: '\\??\\C:\\Users\\abecker\\AppData\\Roaming\\svc.exe',
      status_info: 2,
    }, 'documented parameters by their documented names, as hex; what the monitor adds under its own names');
    assert.deepEqual(setValue!.args, {
      hKey: '0x80000001',
      lpValueName: 'Updater',
      dwType: '0x00000001',
      lpData: 'C:\\Users\\abecker\\AppData\\Roaming\\svc.exe',
      regkey: 'HKEY_CURRENT_USER\\Software\\Microsoft\\Windows\\CurrentVersion\\Run\\Updater',
    });
    assert.deepEqual({ category: setValue!.category, module: setValue!.module, status: setValue!.status, ret: setValue!.ret }, { category: 'registry', module: 'advapi32', status: true, ret: 0 });
    assert.deepEqual({ status: mutant!.status, ret: mutant!.ret, tid: mutant!.tid, name: mutant!.args.mutant_name }, { status: false, ret: -1073741772, tid: 2768, name: 'Global\\nbx-once' });
    assert.deepEqual(anomalies(events), []);
  });

  it('shows a 64-bit process\'s pointers in 16 digits and follows a file handle to the reads on it', async () => {
    const log = sample(3100, true)
      .call('NtOpenFile', [['file_handle', 0x2c0n, 'p'], ['desired_access', 0x80100000, 'x'], ['open_options', 0, 'i'], ['share_access', 1, 'i'], ['filepath', 'C:\\Users\\abecker\\Documents\\budget.xlsx'], ['filepath_r', 'budget.xlsx'], ['status_info', 1, 'i']], { t: 5, category: 'file' })
      .call('NtReadFile', [['file_handle', 0x2c0n, 'p'], ['buffer', Buffer.from('PK\x03\x04\x00\n')], ['length', 4096, 'i'], ['offset', 0n, 'p']], { t: 6, category: 'file' })
      .call('VirtualProtectEx', [['process_handle', -1n, 'p'], ['base_address', 0x7ff6a0001000n, 'p'], ['length', 4096, 'i'], ['protection', 64, 'i']], { t: 7, category: 'process' })
      .call('NtClose', [['handle', 0x2c0n, 'p']], { t: 8, category: 'system' })
      .call('NtReadFile', [['file_handle', 0x2c0n, 'p'], ['buffer', Buffer.alloc(0)], ['length', 16, 'i'], ['offset', 0n, 'p']], { t: 9, category: 'file', ok: false, ret: -1073741816 });
    const [open, read, protect, , readClosed] = calls(await eventsOf(taskWith({ '3100.bson': log.bytes() })));
    assert.equal(open!.args.FileHandle, '0x00000000000002c0');
    assert.deepEqual(read!.args, { FileHandle: '0x00000000000002c0', buffer: 'PK\\x03\\x04\\x00\\n', Length: 4096, ByteOffset: '0x0000000000000000', filepath: 'C:\\Users\\abecker\\Documents\\budget.xlsx' });
    assert.equal(readClosed!.args.filepath, undefined, 'a handle NtClose closed names no file any more');
    assert.deepEqual(protect!.args, { process_handle: '0xffffffffffffffff', base_address: '0x00007ff6a0001000', length: 4096, protection: 64 }, 'an API without documented names keeps Cuckoo\'s');
  });

  it('reads the __anomaly__ message as an anomaly and an older monitor\'s __thread__ as nothing', async () => {
    const log = sample()
      .raw({ I: 90, name: '__thread__', type: 'info', category: '__notification__', args: ['is_success', 'retval', 'ProcessIdentifier'] })
      .raw({ I: 90, T: 7, t: 3, h: 0n, args: [1, 0n, 2760] })
      .anomaly('unhook', 'NtCreateFile', 'Function hook was modified!', 9)
      .call('IsDebuggerPresent', [], { t: 10, ret: 0, ok: true, category: 'system' });
    const events = await eventsOf(taskWith({ '2760.bson': log.bytes() }));
    assert.deepEqual(events.map((event) => event.kind), ['win.process', 'win.anomaly', 'win.call']);
    const anomaly = events[1] as Extract<BehaviorEvent, { kind: 'win.anomaly' }>;
    assert.deepEqual({ category: anomaly.category, funcname: anomaly.funcname, message: anomaly.message, ts: anomaly.ts }, { category: 'unhook', funcname: 'NtCreateFile', message: 'Function hook was modified!', ts: START + 0.009 });
  });

  it('leaves out a call of an API the monitor never explained, and says how many', async () => {
    const log = sample()
      .raw({ I: 77, T: 1, t: 2, h: 0n, args: [1, 0n, 'C:\\x'] })
      .call('DeleteFileW', [['filepath', 'C:\\Users\\abecker\\a.txt'], ['filepath_r', 'a.txt']], { t: 3, category: 'file' });
    const events = await eventsOf(taskWith({ '2760.bson': log.bytes() }));
    assert.deepEqual(calls(events).map((call) => [call.api, call.args]), [['DeleteFileW', { filepath: 'C:\\Users\\abecker\\a.txt', lpFileName: 'a.txt' }]]);
    assert.deepEqual(anomalies(events), ['the behaviour log 2760.bson: 1 calls of an API the monitor had not explained (or not as explained) are not listed']);
  });

  it('ends a log at a document cut short, keeping what came before', async () => {
    const whole = sample().call('DeleteFileW', [['filepath', 'C:\\a.txt'], ['filepath_r', 'a.txt']], { t: 3 }).bytes();
    const next = serialize({ I: 99, T: 1, t: 4, h: 0n, args: [1, 0n] });
    const cut = Buffer.concat([whole, Buffer.from(next).subarray(0, 9)]);
    const events = await eventsOf(taskWith({ '2760.bson': cut }));
    assert.deepEqual(calls(events).map((call) => call.api), ['DeleteFileW']);
    assert.deepEqual(anomalies(events), [`the behaviour log 2760.bson: a document of ${next.length} bytes cut short after 9 at byte ${whole.length}: the rest of the log is not read`]);
  });

  it('ends a log at a document longer than the limit, and at one that is no BSON', async () => {
    const head = sample().call('DeleteFileW', [['filepath', 'C:\\a.txt'], ['filepath_r', 'a.txt']], { t: 3 }).bytes();
    const big = Buffer.concat([head, Buffer.from(serialize({ I: 5, T: 1, t: 5, h: 0n, args: [1, 0n, 'x'.repeat(5000)] }))]);
    const overLimit = await eventsOf(taskWith({ '2760.bson': big }), 4096);
    assert.deepEqual(calls(overLimit).map((call) => call.api), ['DeleteFileW']);
    assert.match(anomalies(overLimit)[0]!, /^the behaviour log 2760\.bson: a document of 50\d\d bytes, more than the 4096 a document may have at byte \d+: the rest of the log is not read$/);

    const garbage = Buffer.concat([head, Buffer.from([12, 0, 0, 0, 0x7f, 0x61, 0, 1, 2, 3, 4, 0]), Buffer.from(serialize({ I: 1, T: 1, t: 9, h: 0n, args: [1, 0n] }))]);
    const broken = await eventsOf(taskWith({ '2760.bson': garbage }));
    assert.deepEqual(calls(broken).map((call) => call.api), ['DeleteFileW'], 'nothing after the broken document is read');
    assert.match(anomalies(broken)[0]!, /^the behaviour log 2760\.bson: a document that is no BSON \(.+\): the rest of the log is not read$/);
  });

  it('reads a large log in bounded batches, and only logs/<pid>.bson files', async () => {
    const log = sample();
    for (let i = 0; i < 3000; i++) log.call('NtDelayExecution', [['milliseconds', 10, 'i'], ['skipped', 0, 'i']], { t: i, category: 'synchronisation' });
    const dir = taskWith({ '2760.bson': log.bytes(), 'analysis.bson.txt': Buffer.from('not a log'), 'events.jsonl': Buffer.from('') });
    const [stream, ...others] = await monitorLogStreams(dir);
    assert.equal(others.length, 0);
    const sizes: number[] = [];
    for (let batch = await stream!.read(); batch.length > 0; batch = await stream!.read()) sizes.push(batch.length);
    assert.equal(sizes.reduce((sum, size) => sum + size, 0), 3001);
    assert.ok(sizes.length >= 6 && Math.max(...sizes) <= 600, `batches of bounded size: ${sizes.join(', ')}`);
    assert.deepEqual(await monitorLogStreams(join(root, 'no-such-task')), []);
  });
});
