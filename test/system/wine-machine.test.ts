import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { analyseSample } from '../helpers/sample-through-api.js';
import type { TestServer } from '../helpers/server.js';
import { setTimeout as sleep } from 'node:timers/promises';
import { detectCgroupLayout } from '../../src/machinery/linux/cgroups.js';
import { AnalysisPaths } from '../../src/storage/layout.js';
import { closeTestMachineries, runInMachine, testMachinery, workDir } from '../linux-support.js';
import { lightPixels, startWineTestServer } from '../helpers/wine-machine.js';
import { windowsSample } from '../helpers/windows-samples.js';

/**
 * Issue 14's machine side, through the API on the real Linux machine: Windows programs (built with
 * mingw-w64) run under Wine from the machine's Wine layer, their Wine debug output lands in
 * logs/wine/relay.log with the pid map and the registry files, Wine's own processes and nestbox's
 * launch stay out of the behaviour, a GUI program's window is on a screenshot, and a DLL runs through
 * rundll32 with its export.
 */
describe('Windows programs under Wine on the Linux machine', { timeout: 1_800_000 }, () => {
  let server: TestServer;
  before(async () => {
    server = await startWineTestServer();
  });
  after(() => server?.close());

  /** Every process of the report with its command line, for the assertion messages. */
  const processesOf = (report: any): string[] => report.behavior.processes.map((p: any) => `${p.pid} ${p.process_name}: ${p.command_line}`);

  for (const bits of [64, 32] as const) {
    it(`runs a ${bits}-bit console program with Wine's package chosen for it, and keeps Wine's own processes out`, async () => {
      const report = await analyseSample(server, 'mutex.exe', readFileSync(windowsSample('mutex', bits)), { timeout: '60' });
      const log = readFileSync(join(report.taskDir, 'analysis.log'), 'utf8');
      assert.match(log, /analysis package: wine/);
      assert.match(log, new RegExp(`running: .*"/usr/lib/wine/${bits === 64 ? 'wine64' : 'wine'}","C:\\\\\\\\users\\\\\\\\abecker\\\\\\\\Downloads\\\\\\\\mutex.exe"`));

      const wine = join(report.taskDir, 'logs', 'wine');
      const relay = readFileSync(join(wine, 'relay.log'), 'utf8');
      // +pid and +timestamp: tick:winpid:wintid:Call module.Function(...)
      assert.match(relay, /^\s*\d+\.\d{3}:[0-9a-f]{4}:[0-9a-f]{4}:Call KERNEL32\.CreateMutexW\(/m);
      assert.doesNotMatch(relay, /services\.exe|explorer\.exe|plugplay/i, "Wine's own processes write nothing there");

      const pids = JSON.parse(readFileSync(join(wine, 'pids.json'), 'utf8')) as Array<{ winpid: number; pid?: number; nspid?: number }>;
      const hostPids = new Set(report.behavior.processes.map((p: any) => p.pid));
      // The processes that made Windows calls (named as Windows names them: CreateMutexW) are the sample and
      // its second copy, which exits within milliseconds. Each is mapped: the first by its host pid, the
      // others by their pid inside the machine, which the monitor's events turn into host pids. Wine may also
      // start a program of its own on demand while the sample runs; that one is mapped too but is not the
      // sample's, and the report does not show it.
      const hostOfMachineTid = new Map(
        readFileSync(join(dirname(wine), 'events.jsonl'), 'utf8')
          .split('\n')
          .filter((line) => line.includes('"process.thread"'))
          .map((line) => JSON.parse(line) as { machineTid: number; pid: number })
          .map((event) => [event.machineTid, event.pid]),
      );
      const mapped = new Set(pids.map((entry) => entry.pid ?? hostOfMachineTid.get(entry.nspid!)));
      const windowsProcesses = report.behavior.processes.filter((p: any) => p.calls.some((call: any) => /^[A-Z]/.test(call.api)));
      assert.equal(windowsProcesses.length, 2, `the mutex sample and its second copy made Windows calls: ${processesOf(report).join('; ')}`);
      for (const process of windowsProcesses) assert.ok(mapped.has(process.pid), `${process.pid} is mapped from its Wine pid: ${JSON.stringify(pids)}`);
      const clock = JSON.parse(readFileSync(join(wine, 'clock.json'), 'utf8'));
      assert.ok(Math.abs(clock.realtime - Date.now() / 1000) < 600 && clock.monotonic > 0);
      for (const file of ['system.reg', 'user.reg', 'userdef.reg']) {
        assert.ok(existsSync(join(wine, 'registry-before', file)), `registry-before/${file}`);
        assert.ok(existsSync(join(wine, 'registry', file)), `registry/${file}`);
      }

      const names = report.behavior.processes.map((p: any) => p.process_name as string);
      for (const own of ['wineserver', 'services.exe', 'explorer.exe', 'plugplay.exe', 'winedevice.exe', 'rundll32.exe', 'init', 'sh', 'bwrap', 'nsenter', 'python3']) {
        assert.ok(!names.includes(own), `${own} is not among the sample's processes: ${processesOf(report).join('; ')}`);
      }
      const first = report.behavior.processes.find((p: any) => p.ppid === 0 || !hostPids.has(p.ppid));
      // Processing shows the process that ran Wine's loader as its Windows program.
      assert.equal(first.command_line, 'C:\\users\\abecker\\Downloads\\mutex.exe', 'the first process is the sample started by Wine');
    });
  }

  it('shows a GUI program’s window on a screenshot', async () => {
    const report = await analyseSample(server, 'gui.exe', readFileSync(windowsSample('gui', 64)), { timeout: '30' });
    const shots = readdirSync(join(report.taskDir, 'shots')).filter((name) => /^\d{4}\.(jpg|png)$/.test(name));
    assert.ok(shots.length > 0, 'screenshots were taken');
    const relay = readFileSync(join(report.taskDir, 'logs', 'wine', 'relay.log'), 'utf8');
    assert.match(relay, /Call user32\.CreateWindowExW\(/i);
    // The window (white, with a line of text) on the black screen: a screenshot with many light pixels.
    const lightest = Math.max(...shots.map((name) => lightPixels(join(report.taskDir, 'shots', name))));
    assert.ok(lightest > 472 * 213 * 0.8, `a screenshot shows the window (${lightest} light pixels)`);
  });

  it('runs a DLL through rundll32 with its first export, or the function the task names', async () => {
    const report = await analyseSample(server, 'payload-dll.dll', readFileSync(windowsSample('payload-dll', 32)), { timeout: '30' });
    const log = readFileSync(join(report.taskDir, 'analysis.log'), 'utf8');
    assert.match(log, /rundll32\.exe","C:\\\\users\\\\abecker\\\\Downloads\\\\payload-dll\.dll,RunPayload"/);
    const dropped = readFileSync(join(report.taskDir, 'files.json'), 'utf8');
    assert.match(dropped, /Downloads\/payload-ran\.txt/, 'the export ran and wrote its file');
    const named = await analyseSample(server, 'payload-dll.dll', readFileSync(windowsSample('payload-dll', 64)), { timeout: '30', options: 'function=NoSuchExport' });
    assert.match(readFileSync(join(named.taskDir, 'analysis.log'), 'utf8'), /payload-dll\.dll,NoSuchExport"/);
    assert.doesNotMatch(readFileSync(join(named.taskDir, 'files.json'), 'utf8'), /payload-ran\.txt/);
  });
});

describe("a Windows program's machine and its CPU share", { timeout: 240_000 }, () => {
  after(() => closeTestMachineries());

  /** The machine's CPU cap as cgroup v2 writes it (`max 100000`: none), read from either cgroup layout. */
  function cpuCap(machineId: string): string | undefined {
    const layout = detectCgroupLayout();
    const group = join(layout.kind === 'hybrid' ? layout.v1Base.cpu! : layout.v2Base, `nestbox-machine-${machineId}`);
    if (layout.kind !== 'hybrid') return existsSync(join(group, 'cpu.max')) ? readFileSync(join(group, 'cpu.max'), 'utf8').trim() : undefined;
    if (!existsSync(join(group, 'cpu.cfs_quota_us'))) return undefined;
    const quota = Number(readFileSync(join(group, 'cpu.cfs_quota_us'), 'utf8'));
    return `${quota < 0 ? 'max' : quota} ${readFileSync(join(group, 'cpu.cfs_period_us'), 'utf8').trim()}`;
  }

  it("lets Wine's boot use every core, and holds the program to the machine's share from its first call", async () => {
    const machinery = testMachinery({ cpu_percent: 50 });
    await machinery.prepare();
    const paths = new AnalysisPaths(join(workDir, `wine-cpu-${Date.now()}`));
    const relayLog = join(paths.dir, 'logs', 'wine', 'relay.log');
    const caps: string[] = [];
    let capOnceCalling: string | undefined;
    await runInMachine(machinery, {
      samplePath: windowsSample('gui', 64),
      package: '',
      timeoutSeconds: 6,
      paths,
      during: async (machineId) => {
        for (let waited = 0; waited < 60_000 && capOnceCalling === undefined; waited += 10) {
          const cap = cpuCap(machineId);
          if (cap !== undefined && caps.at(-1) !== cap) caps.push(cap);
          // The program's first calls are in the log: the cap read after them is the one the program runs under.
          if (existsSync(relayLog) && /:Call /.test(readFileSync(relayLog, 'utf8'))) capOnceCalling = cpuCap(machineId);
          await sleep(10);
        }
      },
    });
    assert.ok(caps.includes('max 100000'), `Wine's boot ran without the cap: ${caps.join(' -> ')}`);
    assert.equal(capOnceCalling, '50000 100000', `the program runs under the machine's share: ${caps.join(' -> ')}`);
  });
});
