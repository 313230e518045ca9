import { execFileSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { cpus, loadavg } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import type { LinuxMachineryParts } from '../src/machinery/linux/index.js';
import { createTaskNetwork } from '../src/machinery/host/network/index.js';
import type { LinuxSettings } from '../src/machinery/linux/settings.js';
import type { Route } from '../src/machinery/types.js';
import { closeTestMachineries, log, runInMachine, testMachinery, workDir } from '../test/linux-support.js';
import { windowsSample } from '../test/helpers/windows-samples.js';
import { ensureGuestRoot } from '../src/machinery/linux/guest-root.js';
import { parseLinuxSettings } from '../src/machinery/linux/settings.js';
import { ensureWineLayer } from '../src/machinery/linux/wine-layer.js';

/**
 * The linux machine's own costs, over N runs each (median, min, max):
 *  - first instruction: from "clean machine requested" (start() called) to the first instruction of the
 *    sample, a tiny static program that prints CLOCK_REALTIME as it starts;
 *  - overhead: what a task costs beyond its analysis time, start + stop + collect + destroy.
 * Between two tasks the machine idles for IDLE_MS, as it does in service while the scheduler polls and
 * the previous task is processed: what the machinery keeps ready for the next task (its network, the
 * tracer's program) is made then. One setup makes the network per task, for comparison. A first task,
 * not counted, waits for what is made once per service (the tracer's program: see bench/tracer.ts).
 * Aims: first instruction < 100 ms, overhead < 1 s. It prints figures; missed aims do not fail it.
 *
 * A Windows program under Wine (issue 14) is measured beside them: from start() called to the program's
 * first Windows API call in Wine's relay log (Wine's boot before it included), aim < 1 s, split at the
 * program's first line of Wine's debug output (the machine and Wine's boot before, the program's own
 * start under Wine after), with the load average the figures were taken at. It needs the
 * Wine layer (built first if missing, not measured) and the mingw-w64 samples (scripts/build-windows-samples.sh).
 *
 *   node dist/bench/machine.js [runs=10]
 */
const RUNS = Number(process.argv[2] ?? 10);
const AIMS = { firstInstructionMs: 100, overheadMs: 1000, firstWindowsCallMs: 1000 };
const IDLE_MS = 3000;

const FIRST_INSTRUCTION_C = `
#include <stdio.h>
#include <time.h>
int main(void) {
  struct timespec now;
  clock_gettime(CLOCK_REALTIME, &now);
  printf("T0 %lld\\n", (long long)now.tv_sec * 1000000000LL + now.tv_nsec);
  return 0;
}
`;

interface Setup {
  name: string;
  settings: Partial<LinuxSettings>;
  route: Route;
  parts?: Partial<LinuxMachineryParts>;
}

const SETUPS: Setup[] = [
  { name: 'bare machine (no display, no tracer), route none', settings: { screenshots: false, tracing: false }, route: 'none' },
  {
    name: 'bare machine, route none, network made per task (no spare)',
    settings: { screenshots: false, tracing: false },
    route: 'none',
    parts: { createTaskNetwork },
  },
  { name: 'with virtual display, route none', settings: { screenshots: true, tracing: false }, route: 'none' },
  { name: 'with virtual display, fake internet (inetsim)', settings: { screenshots: true, tracing: false }, route: 'inetsim' },
  { name: 'full: display, eBPF tracer, fake internet', settings: { screenshots: true, tracing: true }, route: 'inetsim' },
];

const realtimeMs = () => performance.timeOrigin + performance.now();
const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;
const summary = (values: number[]) => `median ${median(values).toFixed(1)} ms (min ${Math.min(...values).toFixed(1)}, max ${Math.max(...values).toFixed(1)})`;

async function measure(setup: Setup, samplePath: string): Promise<void> {
  const machinery = testMachinery(setup.settings, setup.parts);
  await machinery.prepare();
  // One task first, not counted: it waits for whatever the machinery makes once (the tracer's program).
  await runInMachine(machinery, { samplePath, package: 'elf', route: setup.route, timeoutSeconds: 30, clock: '' });
  const firsts: number[] = [];
  const afterStart: number[] = [];
  const phases = { start: [] as number[], stop: [] as number[], collect: [] as number[], destroy: [] as number[], overhead: [] as number[] };
  for (let run = 0; run < RUNS; run++) {
    await sleep(IDLE_MS);
    const requested = realtimeMs();
    const outcome = await runInMachine(machinery, { samplePath, package: 'elf', route: setup.route, timeoutSeconds: 30, clock: '' });
    const t0 = /\[sample\] INFO: T0 (\d+)/.exec(outcome.log)?.[1];
    if (!t0) throw new Error(`run ${run}: the sample printed no start time`);
    const { start, stop, collect, destroy } = outcome.timings;
    const first = Number(BigInt(t0) / 1000n) / 1000 - requested;
    firsts.push(first);
    afterStart.push(first - start);
    phases.start.push(start);
    phases.stop.push(stop);
    phases.collect.push(collect);
    phases.destroy.push(destroy);
    phases.overhead.push(start + stop + collect + destroy);
  }
  await closeTestMachineries();
  console.log(`\n${setup.name}, ${RUNS} runs`);
  console.log(`  first instruction: ${summary(firsts)}  aim < ${AIMS.firstInstructionMs} ms: ${median(firsts) < AIMS.firstInstructionMs ? 'met' : 'MISSED'}`);
  console.log(`    of which after start() returned (sandbox launch): ${summary(afterStart)}`);
  console.log(`  overhead per task: ${summary(phases.overhead)}  aim < ${AIMS.overheadMs} ms: ${median(phases.overhead) < AIMS.overheadMs ? 'met' : 'MISSED'}`);
  console.log(`    start ${summary(phases.start)}`);
  console.log(`    stop ${summary(phases.stop)}, collect ${summary(phases.collect)}, destroy ${summary(phases.destroy)}`);
}

/**
 * When a Windows program's Wine process wrote its first line of Wine's debug output (it has just
 * started: Wine's boot is over) and made its first API call, as Wine's relay log shows them, on the
 * realtime clock (ms).
 */
function windowsProgramStart(taskDir: string): { firstLineMs: number; firstCallMs: number } {
  const clock = JSON.parse(readFileSync(join(taskDir, 'logs', 'wine', 'clock.json'), 'utf8')) as { realtime: number; monotonic: number };
  const relay = readFileSync(join(taskDir, 'logs', 'wine', 'relay.log'), 'utf8');
  // Wine's ticks (CLOCK_MONOTONIC_RAW, printed as seconds.milliseconds); the first API call is not a DLL's or TLS entry point.
  const firstLine = /^\s*(\d+\.\d+):[0-9a-f]+:[0-9a-f]+:/m.exec(relay)?.[1];
  const firstCall = /^\s*(\d+\.\d+):[0-9a-f]+:[0-9a-f]+:Call (?!PE DLL|TLS callback)\w+\.\w+\(/m.exec(relay)?.[1];
  if (!firstLine || !firstCall) throw new Error('the relay log shows no call');
  const realtimeMs = (tick: string) => (clock.realtime + Number(tick) - clock.monotonic) * 1000;
  return { firstLineMs: realtimeMs(firstLine), firstCallMs: realtimeMs(firstCall) };
}

async function measureWine(): Promise<void> {
  const settings = { screenshots: true, tracing: true };
  const ready = parseLinuxSettings(settings, 'linux1');
  await ensureWineLayer(await ensureGuestRoot(ready, log), ready, log);
  const machinery = testMachinery(settings);
  await machinery.prepare();
  const windowsPath = windowsSample('mutex', 64);
  const linuxPath = join(workDir, 'first');
  const wine = { firsts: [] as number[], booted: [] as number[], ownStarts: [] as number[], ends: [] as number[] };
  const linux: number[] = [];
  await runInMachine(machinery, { samplePath: windowsPath, package: '', route: 'none', timeoutSeconds: 30, clock: '' });
  for (let run = 0; run < RUNS; run++) {
    await sleep(IDLE_MS);
    let requested = realtimeMs();
    const outcome = await runInMachine(machinery, { samplePath: windowsPath, package: '', route: 'none', timeoutSeconds: 30, clock: '' });
    const program = windowsProgramStart(outcome.paths.dir);
    wine.firsts.push(program.firstCallMs - requested);
    wine.booted.push(program.firstLineMs - requested);
    wine.ownStarts.push(program.firstCallMs - program.firstLineMs);
    wine.ends.push(outcome.timings.start + outcome.timings.run);
    await sleep(IDLE_MS);
    requested = realtimeMs();
    const plain = await runInMachine(machinery, { samplePath: linuxPath, package: 'elf', route: 'none', timeoutSeconds: 30, clock: '' });
    const t0 = /\[sample\] INFO: T0 (\d+)/.exec(plain.log)?.[1];
    if (!t0) throw new Error(`run ${run}: the Linux sample printed no start time`);
    linux.push(Number(BigInt(t0) / 1000n) / 1000 - requested);
  }
  await closeTestMachineries();
  const [load] = loadavg();
  console.log(`\nWindows program under Wine (display, eBPF tracer), ${RUNS} runs, beside the plain Linux sample`);
  console.log(`  task start to first Windows API call: ${summary(wine.firsts)}  aim < ${AIMS.firstWindowsCallMs} ms: ${median(wine.firsts) < AIMS.firstWindowsCallMs ? 'met' : 'MISSED'}`);
  console.log(`    of which the machine and Wine's boot (task start to the program's first line of Wine's debug output): ${summary(wine.booted)}`);
  console.log(`    and the program's own start under Wine (that line to its first API call): ${summary(wine.ownStarts)}`);
  console.log(`  task start to first instruction, plain Linux sample: ${summary(linux)}`);
  console.log(`  task start to the run's end (Wine's processes lingering after the program included): ${summary(wine.ends)}`);
  console.log(`  load average (1 min) at the end: ${load!.toFixed(2)} on ${cpus().length} CPUs`);
}

writeFileSync(join(workDir, 'first.c'), FIRST_INSTRUCTION_C);
const sample = join(workDir, 'first');
execFileSync('gcc', ['-O2', '-static', '-o', sample, join(workDir, 'first.c')]);
const only = process.env.NESTBOX_BENCH_SETUP;
for (const setup of SETUPS) if (!only || setup.name.includes(only)) await measure(setup, sample);
if (!only || only === 'wine') await measureWine();
