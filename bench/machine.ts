import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pino } from 'pino';
import { configSchema } from '../src/config/schema.js';
import type { MachineRow } from '../src/db/schema.js';
import { createLinuxMachinery } from '../src/machinery/linux/index.js';
import type { LinuxSettings } from '../src/machinery/linux/settings.js';
import type { Route } from '../src/machinery/types.js';
import { AnalysisPaths } from '../src/storage/layout.js';

/**
 * The linux machine's own costs, over N runs each (median, min, max):
 *  - first instruction: from "clean machine requested" (start() called) to the first instruction of the
 *    sample, a tiny static program that prints CLOCK_REALTIME as it starts;
 *  - overhead: what a task costs beyond its analysis time, start + stop + collect + destroy.
 * Aims: first instruction < 100 ms, overhead < 1 s. It prints figures; missed aims do not fail it.
 *
 *   node dist/bench/machine.js [runs=10]
 */
const RUNS = Number(process.argv[2] ?? 10);
const AIMS = { firstInstructionMs: 100, overheadMs: 1000 };

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
}

const SETUPS: Setup[] = [
  { name: 'bare machine (no display, no tracer), route none', settings: { screenshots: false, tracing: false }, route: 'none' },
  { name: 'with virtual display, route none', settings: { screenshots: true, tracing: false }, route: 'none' },
  { name: 'with virtual display, fake internet (inetsim)', settings: { screenshots: true, tracing: false }, route: 'inetsim' },
  { name: 'full: display, eBPF tracer (kept warm), fake internet', settings: { screenshots: true, tracing: true }, route: 'inetsim' },
];

const realtimeMs = () => performance.timeOrigin + performance.now();
const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;
const summary = (values: number[]) => `median ${median(values).toFixed(1)} ms (min ${Math.min(...values).toFixed(1)}, max ${Math.max(...values).toFixed(1)})`;

async function measure(setup: Setup, sample: string, work: string): Promise<void> {
  const log = pino({ level: 'silent' });
  const config = configSchema.parse({ machines: [{ name: 'bench', settings: setup.settings }] });
  const machinery = createLinuxMachinery(config, log);
  await machinery.prepare();
  // Give a tracer kept warm the time it has between tasks in service.
  if (setup.settings.tracing) await new Promise((resolve) => setTimeout(resolve, 5000));
  const firsts: number[] = [];
  const afterStart: number[] = [];
  const phases = { start: [] as number[], stop: [] as number[], collect: [] as number[], destroy: [] as number[], overhead: [] as number[] };
  for (let run = 0; run < RUNS; run++) {
    const paths = new AnalysisPaths(join(work, `${setup.route}-${run}-${Date.now()}`));
    const requested = realtimeMs();
    let time = performance.now();
    const lap = () => {
      const now = performance.now();
      const spent = now - time;
      time = now;
      return spent;
    };
    const session = await machinery.start({
      taskId: 1 + run,
      machine: { name: 'bench' } as MachineRow,
      paths,
      category: 'file',
      samplePath: sample,
      package: 'elf',
      options: {},
      timeoutSeconds: 30,
      enforceTimeout: false,
      memory: false,
      route: setup.route,
      clock: '',
      log,
    });
    const start = lap();
    await session.run(new AbortController().signal);
    lap();
    await session.stop();
    const stop = lap();
    await session.collect();
    const collect = lap();
    await session.destroy();
    const destroy = lap();
    const t0 = /\[sample\] INFO: T0 (\d+)/.exec(readFileSync(paths.analysisLog, 'utf8'))?.[1];
    if (!t0) throw new Error(`run ${run}: the sample printed no start time`);
    const first = Number(BigInt(t0) / 1000n) / 1000 - requested;
    firsts.push(first);
    afterStart.push(first - start);
    phases.start.push(start);
    phases.stop.push(stop);
    phases.collect.push(collect);
    phases.destroy.push(destroy);
    phases.overhead.push(start + stop + collect + destroy);
    if (setup.settings.tracing) await new Promise((resolve) => setTimeout(resolve, 3000));
  }
  await machinery.close();
  console.log(`\n${setup.name}, ${RUNS} runs`);
  console.log(`  first instruction: ${summary(firsts)}  aim < ${AIMS.firstInstructionMs} ms: ${median(firsts) < AIMS.firstInstructionMs ? 'met' : 'MISSED'}`);
  console.log(`    of which after start() returned (sandbox launch): ${summary(afterStart)}`);
  console.log(`  overhead per task: ${summary(phases.overhead)}  aim < ${AIMS.overheadMs} ms: ${median(phases.overhead) < AIMS.overheadMs ? 'met' : 'MISSED'}`);
  console.log(`    start ${summary(phases.start)}`);
  console.log(`    stop ${summary(phases.stop)}, collect ${summary(phases.collect)}, destroy ${summary(phases.destroy)}`);
}

const work = mkdtempSync(join(tmpdir(), 'nestbox-bench-machine-'));
try {
  writeFileSync(join(work, 'first.c'), FIRST_INSTRUCTION_C);
  const sample = join(work, 'first');
  execFileSync('gcc', ['-O2', '-static', '-o', sample, join(work, 'first.c')]);
  for (const setup of SETUPS) await measure(setup, sample, work);
} finally {
  rmSync(work, { recursive: true, force: true });
}
