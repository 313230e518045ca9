import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pino } from 'pino';
import { BpftraceProgram, startStrace } from '../src/machinery/host/tracer/index.js';
import { compileFixtures, createTestCgroup, ofKind, readEvents, runInCgroup } from '../test/fixtures/tracer-harness.js';

/**
 * What behaviour tracing costs a syscall-heavy sample: the same workloads run untraced, under the eBPF
 * tracer and under the strace fallback, in one run. The open+close loop is the worst case (every call
 * is a record); `find` over /usr is a realistic syscall-heavy program. Also what the eBPF tracer's
 * program costs: compiled and attached once, then armed and stopped (drained) per task. Prints
 * figures; missed aims do not fail it.
 *
 *   node dist/bench/tracer.js [opens=20000]
 */
const OPENS = Number(process.argv[2] ?? 20_000);
const REPEATS = 3;
/** Every traced run is cut off after this long: strace can be a hundred times slower. */
const RUN_LIMIT_MS = 60_000;
const AIM_EBPF_SLOWDOWN = 2;

const log = pino({ level: process.env.NESTBOX_BENCH_LOG ?? 'warn' });
const scratch = await mkdtemp(join(tmpdir(), 'nestbox-bench-tracer-'));
const bin = await compileFixtures(['tracer-open-loop'], scratch);

interface Workload {
  name: string;
  argv: string[];
}

const workloads: Workload[] = [
  { name: `open+close x${OPENS}`, argv: [bin['tracer-open-loop']!, String(OPENS), '/etc/hostname'] },
  { name: 'find /usr -name nestbox-none', argv: ['find', '/usr', '-name', 'nestbox-none'] },
];

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;

async function timed(cgroupPath: string | null, argv: string[]): Promise<number> {
  const t0 = performance.now();
  const limit = setTimeout(() => void runInCgroup(null, ['pkill', '-KILL', '-f', argv.join(' ')]), RUN_LIMIT_MS);
  const result = await runInCgroup(cgroupPath, argv);
  clearTimeout(limit);
  const ms = performance.now() - t0;
  if (result.code !== 0 && argv[0] !== 'find') throw new Error(`${argv.join(' ')} failed: ${result.stderr}`);
  return ms;
}

async function untraced(workload: Workload): Promise<number> {
  const cgroup = await createTestCgroup();
  try {
    const times: number[] = [];
    for (let i = 0; i < REPEATS; i++) times.push(await timed(cgroup.path, workload.argv));
    return median(times);
  } finally {
    await cgroup.remove();
  }
}

interface EbpfRun {
  ms: number;
  events: number;
  lost: number;
  armMs: number;
  /** stop(): drain every buffer, print the totals, forget the sandbox. */
  stopMs: number;
}

/** One program serves every workload, as it serves task after task in service. */
async function underEbpf(program: BpftraceProgram, workload: Workload): Promise<EbpfRun> {
  const cgroup = await createTestCgroup();
  const eventsPath = join(scratch, 'ebpf.jsonl');
  try {
    const t0 = performance.now();
    const session = await program.arm({ cgroupV2Path: cgroup.path, eventsPath, log });
    const armMs = performance.now() - t0;
    const times: number[] = [];
    for (let i = 0; i < REPEATS; i++) times.push(await timed(cgroup.path, workload.argv));
    const t1 = performance.now();
    const { lost } = await session.stop();
    const stopMs = performance.now() - t1;
    const events = (await readEvents(eventsPath)).length;
    return { ms: median(times), events, lost, armMs, stopMs };
  } finally {
    await cgroup.remove();
  }
}

async function underStrace(workload: Workload): Promise<{ ms: number; events: number }> {
  const eventsPath = join(scratch, 'strace.jsonl');
  const session = await startStrace({ cgroupV2Path: '', eventsPath, log }, log, 'benchmark');
  const ms = await timed(null, session.wrap!(workload.argv));
  await session.stop();
  return { ms, events: (await readEvents(eventsPath)).length };
}

let program: BpftraceProgram | undefined;
try {
  const t0 = performance.now();
  program = await BpftraceProgram.launch(log);
  console.log(`eBPF tracer cold start (compile + attach, once per service): ${((performance.now() - t0) / 1000).toFixed(2)} s`);
  for (const workload of workloads) {
    const base = await untraced(workload);
    const ebpf = await underEbpf(program, workload);
    const strace = await underStrace(workload);
    console.log(`\n${workload.name}`);
    console.log(`  untraced       ${base.toFixed(0).padStart(7)} ms`);
    console.log(
      `  eBPF           ${ebpf.ms.toFixed(0).padStart(7)} ms  x${(ebpf.ms / base).toFixed(2)}  (${ebpf.events} events, ${ebpf.lost} lost; armed in ${ebpf.armMs.toFixed(0)} ms, stopped in ${ebpf.stopMs.toFixed(0)} ms)`,
    );
    console.log(`  strace         ${strace.ms.toFixed(0).padStart(7)} ms  x${(strace.ms / base).toFixed(2)}  (${strace.events} events)`);
    const verdict = ebpf.ms / base <= AIM_EBPF_SLOWDOWN ? 'met' : 'missed';
    console.log(`  aim: eBPF under x${AIM_EBPF_SLOWDOWN}: ${verdict}`);
    const opens = ofKind(await readEvents(join(scratch, 'ebpf.jsonl')), 'file.open').length;
    console.log(`  (eBPF recorded ${opens} file.open events over ${REPEATS} runs)`);
  }
} finally {
  await program?.discard();
  await rm(scratch, { recursive: true, force: true });
}
