import assert from 'node:assert/strict';
import { cpSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { droppedModule } from '../../src/processing/modules/dropped.js';
import { YaraScanner } from '../../src/processing/yara.js';
import { FileTypeDetector } from '../../src/storage/filetype.js';
import type { ProcessingInput } from '../../src/processing/types.js';
import type { BehaviorEvent, EventBody } from '../../src/report/events.js';
import type { BehaviorSection } from '../../src/report/report-types.js';
import { WINE_DRIVE_C } from '../../src/report/windows-paths.js';
import { wineCallStream } from '../../src/report/wine-call-stream.js';
import { diffHives, parseRegistryFile, registryChanges } from '../../src/report/wine-registry-diff.js';
import { AnalysisPaths } from '../../src/storage/layout.js';
import { behaviorSectionOf } from '../helpers/behavior-section.js';

/**
 * A Wine task's folder as the machine leaves it: the monitor's log of the host processes, Wine's relay log
 * (the real fixture), the clock pair read before the sample started (the real one of that run), and the
 * registry files before and after. Processing puts the Windows calls among the Linux events by time, in
 * the host process that ran them, and fills Cuckoo's Windows summary keys.
 */

const FIXTURE = join(import.meta.dirname, '../../../test/fixtures/wine');
/** CLOCK_REALTIME and CLOCK_MONOTONIC_RAW read together just before the fixture's run. */
const REALTIME = 1795756712.1063316;
const MONOTONIC = 62714.589635817;
const at = (tick: number) => REALTIME + (tick - MONOTONIC);

function event(pid: number, ppid: number, tick: number, body: EventBody, comm: string): BehaviorEvent {
  return { ts: at(tick), pid, ppid, tid: pid, comm, ...body } as BehaviorEvent;
}

const PROBE = `${WINE_DRIVE_C}/users/root/AppData/Roaming/probe.txt`;
/** The monitor's view: the probe's Wine process, a shell that is no Wine process, and the child Wine started. */
const HOST_EVENTS: BehaviorEvent[] = [
  event(4321, 4300, 62714.6, { kind: 'process.exec', path: '/usr/lib/wine/wine64', argv: ['/usr/lib/wine/wine64', 'C:\\users\\Public\\probe64.exe'], ret: 0 }, 'bash'),
  event(4321, 4300, 62714.601, { kind: 'process.rename', name: 'probe64.exe' }, 'wine64'),
  event(4321, 4300, 62714.848, { kind: 'file.open', path: PROBE, flags: 0o1101, mode: 0o644, ret: 40 }, 'probe64.exe'),
  event(4321, 4300, 62714.86, { kind: 'process.fork', child: 4325 }, 'probe64.exe'),
  event(4325, 4321, 62714.861, { kind: 'process.exec', path: '/bin/sh', argv: ['sh', '-c', 'true'], ret: 0 }, 'probe64.exe'),
  event(4321, 4300, 62714.862, { kind: 'process.fork', child: 4329 }, 'probe64.exe'),
  event(4329, 4321, 62714.863, { kind: 'process.fork', child: 4330 }, 'probe64.exe'),
  event(4330, 4329, 62714.87, { kind: 'process.exec', path: '/usr/lib/wine/wine64', argv: ['/usr/lib/wine/wine64', 'C:\\users\\Public\\probe64.exe', 'child'], ret: 0 }, 'probe64.exe'),
  event(4330, 4329, 62714.871, { kind: 'process.rename', name: 'probe64.exe' }, 'wine64'),
  event(4330, 4329, 62715.16, { kind: 'process.exit', code: 3 }, 'probe64.exe'),
  event(4321, 4300, 62715.19, { kind: 'process.counts', counts: { openat: 120, write: 7 } }, 'probe64.exe'),
  event(4321, 4300, 62715.2, { kind: 'process.exit', code: 0 }, 'probe64.exe'),
];

function wineTask(root: string, name: string, relayLog = readFileSync(join(FIXTURE, 'probe64-relay.log'), 'utf8'), hostEvents = HOST_EVENTS): AnalysisPaths {
  const paths = new AnalysisPaths(join(root, name));
  mkdirSync(join(paths.dir, 'logs/wine'), { recursive: true });
  writeFileSync(join(paths.dir, 'logs/events.jsonl'), hostEvents.map((e) => `${JSON.stringify(e)}\n`).join(''));
  writeFileSync(join(paths.dir, 'logs/wine/relay.log'), relayLog);
  writeFileSync(join(paths.dir, 'logs/wine/clock.json'), JSON.stringify({ realtime: REALTIME, monotonic: MONOTONIC }));
  cpSync(join(FIXTURE, 'registry-before'), join(paths.dir, 'logs/wine/registry-before'), { recursive: true });
  cpSync(join(FIXTURE, 'registry-after'), join(paths.dir, 'logs/wine/registry'), { recursive: true });
  return paths;
}

describe('a Wine task in the behaviour section', () => {
  let root: string;
  let section: BehaviorSection;
  before(async () => {
    root = mkdtempSync(join(tmpdir(), 'nestbox-wine-'));
    section = await behaviorSectionOf(wineTask(root, 'task'));
  });
  after(() => rmSync(root, { recursive: true, force: true }));

  const processOf = (pid: number) => section.processes.find((process) => process.pid === pid)!;

  it("puts each Wine process's Windows calls in the host process that ran it, named after its program", () => {
    const probe = processOf(4321);
    assert.equal(probe.process_name, 'probe64.exe');
    assert.equal(probe.process_path, 'C:\\users\\Public\\probe64.exe');
    assert.ok(probe.calls.some((call) => call.api === 'RegSetValueExW'));
    const child = processOf(4330);
    assert.equal(child.ppid, 4329);
    assert.equal(child.command_line, 'C:\\users\\Public\\probe64.exe child');
    assert.deepEqual(child.calls.filter((call) => call.category !== 'process' || call.api === 'ExitProcess').map((call) => call.api).slice(-3), ['Sleep', 'GetModuleHandleW', 'ExitProcess']);
    assert.equal(processOf(4325).calls.some((call) => call.category === 'filesystem'), false, 'the shell ran no Windows code');
    // The main thread is the host process; the calls carry Cuckoo's Windows categories.
    const set = probe.calls.find((call) => call.api === 'RegSetValueExW')!;
    assert.equal(set.tid, 4321);
    assert.equal(set.category, 'registry');
    assert.equal(set.arguments.regkey, 'HKEY_CURRENT_USER\\Software\\Microsoft\\Windows\\CurrentVersion\\Run\\probe');
  });

  it('names a Wine process after its program even when it made no traced Windows call', async () => {
    const quiet = [
      ...HOST_EVENTS.slice(0, -1),
      event(4340, 4321, 62715.1, { kind: 'process.exec', path: '/usr/lib/wine/wine64', argv: ['/usr/lib/wine/wine64', 'C:\\users\\Public\\quiet.exe', '/s'], ret: 0 }, 'probe64.exe'),
      // Wine's threads have names of their own: the program's path names the process, not a thread.
      event(4340, 4321, 62715.101, { kind: 'process.rename', name: 'wine_threadpool' }, 'wine64'),
      event(4340, 4321, 62715.15, { kind: 'process.exit', code: 0 }, 'quiet.exe'),
      HOST_EVENTS.at(-1)!,
    ];
    const withQuiet = await behaviorSectionOf(wineTask(root, 'quiet', undefined, quiet));
    const process = withQuiet.processes.find((entry) => entry.pid === 4340)!;
    assert.deepEqual([process.process_name, process.process_path, process.command_line], ['quiet.exe', 'C:\\users\\Public\\quiet.exe', 'C:\\users\\Public\\quiet.exe /s']);
  });

  it('interleaves the Windows calls with the Linux view of the same process by time', () => {
    const apis = processOf(4321).calls.map((call) => call.api);
    const open = apis.indexOf('openat');
    assert.ok(open > 0, 'the monitor view is kept');
    assert.equal(apis[open - 1], 'WriteFile', 'CreateFileW and WriteFile returned before the open was seen (tick .845 < .848)');
    assert.equal(apis[open + 1], 'CopyFileW', 'CopyFileW returned after (tick .851)');
    const times = processOf(4321).calls.map((call) => call.time);
    assert.deepEqual(times, [...times].sort((a, b) => a - b), 'calls in time order');
    const write = processOf(4321).calls.find((call) => call.api === 'WriteFile')!;
    assert.ok(Math.abs(write.time - at(62714.845)) < 0.001, 'Wine ticks turned into the log clock');
  });

  it('counts the Windows calls by their Windows names in apistats', () => {
    const stats = section.apistats['4321']!;
    assert.equal(stats.CreateFileW, 2);
    assert.equal(stats.CreateFileA, 1);
    assert.equal(stats.RegSetValueExW, 2);
    assert.equal(stats.openat, 120, "the tracer's own count of the system calls");
    assert.equal(stats.write, 7);
    assert.equal(section.apistats['4330']!.Sleep, 1);
  });

  it("fills Cuckoo's Windows summary keys with Windows paths and registry paths", () => {
    const summary = section.summary;
    const has = (key: string, value: string) => assert.ok(summary[key]?.includes(value), `${key}: ${value} in ${JSON.stringify(summary[key])}`);
    has('file_created', 'C:\\users\\root\\AppData\\Roaming\\probe.txt');
    has('file_created', 'C:\\users\\Public\\crt.txt');
    has('file_written', 'C:\\users\\root\\AppData\\Roaming\\probe.txt');
    has('file_deleted', 'C:\\users\\root\\Temp\\probe-moved.txt');
    has('file_copied', 'C:\\users\\root\\AppData\\Roaming\\probe.txt -> C:\\users\\root\\Temp\\probe-copy.txt');
    has('file_moved', 'C:\\users\\root\\Temp\\probe-copy.txt -> C:\\users\\root\\Temp\\probe-moved.txt');
    has('file_failed', 'C:\\nonexistent\\x.txt');
    has('regkey_written', 'HKEY_CURRENT_USER\\Software\\Microsoft\\Windows\\CurrentVersion\\Run\\probe');
    has('regkey_written', 'HKEY_CURRENT_USER\\Software\\ProbeVendor\\Settings\\installed');
    has('regkey_read', 'HKEY_LOCAL_MACHINE\\SOFTWARE\\Microsoft\\Windows NT\\CurrentVersion\\ProductName');
    has('regkey_deleted', 'HKEY_CURRENT_USER\\Software\\ProbeVendor\\Settings');
    has('regkey_deleted', 'HKEY_CURRENT_USER\\Software\\ProbeVendor\\Settings\\installed');
    assert.deepEqual(summary.dll_loaded, ['ntdll.dll', 'ws2_32.dll']);
    assert.deepEqual(summary.mutex, ['Global\\probe-mutex-1']);
    has('command_line', '"C:\\users\\Public\\probe64.exe" child');
    // The child's own command line, as the Wine process that ran it shows it.
    has('command_line', 'C:\\users\\Public\\probe64.exe child');
    assert.deepEqual(summary.resolves_host, ['localhost']);
    assert.deepEqual(summary.connects_host, ['127.0.0.1']);
    assert.deepEqual(summary.fetches_url, ['http://127.0.0.1:9/payload.exe']);
    has('directory_enumerated', 'C:\\windows\\*.ini');
    // The monitor's open of the same file, under the prefix's C: drive, is listed by its Windows path too.
    has('file_opened', 'C:\\users\\root\\AppData\\Roaming\\probe.txt');
    assert.equal(JSON.stringify(summary).includes(WINE_DRIVE_C), false);
  });

  it('adds the registry writes of the saved registry files, which the relay log may not show', () => {
    // Wine's own start-up rewrote DriverDateData in that run: the files hold it, relay never saw it.
    assert.ok(section.summary.regkey_written!.includes('HKEY_LOCAL_MACHINE\\System\\CurrentControlSet\\Control\\Class\\{4D36E968-E325-11CE-BFC1-08002BE10318}\\0000\\DriverDateData'));
    assert.equal(section.summary.regkey_written!.filter((key) => key.endsWith('\\Run\\probe')).length, 1, 'once, though both tell it');
  });

  it("says so when the machine cut Wine's relay log, and keeps the calls before the cut", async () => {
    const relay = readFileSync(join(FIXTURE, 'probe64-relay.log'), 'utf8');
    const kept = relay.slice(0, relay.indexOf('Call KERNEL32.CreateProcessW'));
    const cut = await behaviorSectionOf(wineTask(root, 'cut', `${kept.slice(0, kept.lastIndexOf('\n') + 1)}nestbox: relay log cut at ${kept.length} bytes\n`));
    assert.ok(cut.anomaly.some((anomaly) => anomaly.funcname === 'relay.log' && anomaly.message.includes(`${kept.length} bytes`)));
    assert.ok(cut.summary.regkey_written!.some((key) => key.endsWith('\\Run\\probe')));
    assert.equal(cut.processes.find((process) => process.pid === 4321)!.calls.some((call) => call.api === 'CreateProcessW'), false);
    assert.equal(section.anomaly.some((anomaly) => anomaly.funcname === 'relay.log'), false);
  });

  it('takes the host pids the machine recorded when it wrote them', async () => {
    const paths = wineTask(root, 'with-pids');
    writeFileSync(join(paths.dir, 'logs/wine/pids.json'), JSON.stringify([{ winpid: 0x158, pid: 4321, tids: { [0x15c]: 4322 } }, { winpid: 0x160, pid: 4330 }]));
    // The child's loader exec is not in this log: the map still places its calls.
    const log = join(paths.dir, 'logs/events.jsonl');
    writeFileSync(log, HOST_EVENTS.filter((e) => !(e.pid === 4330 && e.kind === 'process.exec')).map((e) => `${JSON.stringify(e)}\n`).join(''));
    const withPids = await behaviorSectionOf(paths);
    assert.ok(withPids.processes.find((process) => process.pid === 4330)!.calls.some((call) => call.api === 'Sleep'));
    const set = withPids.processes.find((process) => process.pid === 4321)!.calls.find((call) => call.api === 'RegSetValueExW')!;
    assert.equal(set.tid, 4322, "the thread's host tid from the record");
  });

  it("takes ids inside the machine from the record and turns them into host ids with the monitor's events", async () => {
    const paths = wineTask(root, 'with-machine-ids');
    writeFileSync(join(paths.dir, 'logs/wine/pids.json'), JSON.stringify([{ winpid: 0x158, pid: 4321, nstids: {} }, { winpid: 0x160, nspid: 7, nstids: { [0x164]: 7 } }]));
    // Another copy of the program ran Wine's loader first: matched in order, it would take the child's calls.
    const decoy = [
      event(4326, 4321, 62714.8605, { kind: 'process.exec', path: '/usr/lib/wine/wine64', argv: ['/usr/lib/wine/wine64', 'C:\\users\\Public\\probe64.exe', 'child'], ret: 0 }, 'probe64.exe'),
      event(4326, 4321, 62714.8606, { kind: 'process.thread', machineTid: 5 }, 'probe64.exe'),
      event(4330, 4329, 62714.8631, { kind: 'process.thread', machineTid: 7 }, 'probe64.exe'),
    ];
    const log = [...HOST_EVENTS, ...decoy].sort((a, b) => a.ts - b.ts);
    writeFileSync(join(paths.dir, 'logs/events.jsonl'), log.map((e) => `${JSON.stringify(e)}\n`).join(''));
    const behavior = await behaviorSectionOf(paths);
    const child = behavior.processes.find((process) => process.pid === 4330)!;
    assert.ok(child.calls.some((call) => call.api === 'Sleep' && call.tid === 4330), 'the child process by its pid inside the machine');
    assert.equal(behavior.processes.find((process) => process.pid === 4326)?.calls.some((call) => /^[A-Z]/.test(call.api)) ?? false, false, 'the decoy made no Windows call');
  });
});

describe('the registry diff', () => {
  it('reads values across continued lines and reports added, changed and removed values and keys', () => {
    const before = parseRegistryFile('WINE REGISTRY Version 2\n\n[Software\\\\Old] 1\n"gone"="x"\n\n[Software\\\\Keep] 1\n#time=1\n"same"=dword:00000001\n"changed"=hex:01,02,\\\n  03\n"dropped"="y"\n');
    const after = parseRegistryFile('WINE REGISTRY Version 2\n\n[Software\\\\Keep] 2\n#time=2\n"same"=dword:00000001\n"changed"=hex:01,02,\\\n  04\n@="default"\n"qu\\"ote"="z"\n\n[Software\\\\New\\\\Empty] 2\n');
    const changes = { written: [] as string[], deleted: [] as string[] };
    diffHives(before, after, 'HKEY_CURRENT_USER', changes);
    assert.deepEqual(changes.written.sort(), [
      'HKEY_CURRENT_USER\\Software\\Keep',
      'HKEY_CURRENT_USER\\Software\\Keep\\changed',
      'HKEY_CURRENT_USER\\Software\\Keep\\qu"ote',
      'HKEY_CURRENT_USER\\Software\\New\\Empty',
    ]);
    assert.deepEqual(changes.deleted.sort(), ['HKEY_CURRENT_USER\\Software\\Keep\\dropped', 'HKEY_CURRENT_USER\\Software\\Old']);
  });

  it("is nothing for a task without saved registry files, and the real run's Run key otherwise", async () => {
    const root = mkdtempSync(join(tmpdir(), 'nestbox-wine-reg-'));
    try {
      assert.equal(await registryChanges(root), undefined);
      const paths = wineTask(root, 'task');
      const changes = (await registryChanges(paths.dir))!;
      assert.ok(changes.written.includes('HKEY_CURRENT_USER\\Software\\Microsoft\\Windows\\CurrentVersion\\Run\\probe'));
      assert.deepEqual(changes.deleted, []);
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  });
});

describe('a large relay log', () => {
  it('is read in bounded batches, fast', async (t) => {
    const root = mkdtempSync(join(tmpdir(), 'nestbox-wine-big-'));
    try {
      const pairs = 200_000;
      const lines: string[] = [];
      for (let i = 0; i < pairs; i++) {
        const tick = (62714.6 + i / 1000).toFixed(3);
        lines.push(`${tick}:0158:015c:Call KERNEL32.CreateFileW(0021faa0 L"C:\\\\users\\\\root\\\\f${i}.txt",40000000,00000000,00000000,00000002,00000080,00000000) ret=14000165e`);
        lines.push(`${tick}:0158:015c:Ret  KERNEL32.CreateFileW() retval=00000078 ret=14000165e`);
      }
      const paths = wineTask(root, 'big', `${lines.join('\n')}\n`);
      const started = process.hrtime.bigint();
      const stream = (await wineCallStream(paths.dir))!;
      let total = 0;
      let largest = 0;
      let last = -Infinity;
      for (let batch = await stream.read(); batch.length > 0; batch = await stream.read()) {
        total += batch.length;
        largest = Math.max(largest, batch.length);
        for (const call of batch) {
          assert.ok(call.ts >= last, 'time order');
          last = call.ts;
        }
      }
      const seconds = Number(process.hrtime.bigint() - started) / 1e9;
      t.diagnostic(`${lines.length} relay lines in ${seconds.toFixed(2)} s: ${Math.round(lines.length / seconds)} lines/s, largest batch ${largest} calls`);
      assert.equal(total, pairs);
      assert.ok(largest < pairs / 4, 'read a chunk at a time, not the whole log');
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  });
});

describe('files a Windows program dropped', () => {
  it('are named by their Windows path', async () => {
    const root = mkdtempSync(join(tmpdir(), 'nestbox-wine-dropped-'));
    const fileType = new FileTypeDetector();
    const yara = new YaraScanner([], root);
    try {
      const paths = new AnalysisPaths(join(root, 'task'));
      paths.create();
      writeFileSync(join(paths.files, '0123456789abcdef_payload.exe'), 'MZ not really\n');
      writeFileSync(join(paths.files, '1123456789abcdef_note.txt'), 'linux side\n');
      const entries = [
        { path: 'files/0123456789abcdef_payload.exe', filepath: `${WINE_DRIVE_C}/users/abecker/AppData/Roaming/payload.exe`, pids: [4321] },
        { path: 'files/1123456789abcdef_note.txt', filepath: '/tmp/note.txt', pids: [4321] },
      ];
      writeFileSync(paths.filesJson, entries.map((entry) => `${JSON.stringify(entry)}\n`).join(''));
      const input = { paths, tools: { fileType, yara } } as unknown as ProcessingInput;
      const files = (await droppedModule.run(input))!;
      assert.deepEqual(files.map((file) => file.filepath).sort(), ['/tmp/note.txt', 'C:\\users\\abecker\\AppData\\Roaming\\payload.exe']);
    } finally {
      fileType.close();
      await yara.close();
      rmSync(root, { recursive: true, force: true });
    }
  });
});
