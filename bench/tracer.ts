import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync, statSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';
import { mkdtemp, rm } from 'node:fs/promises';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { pino } from 'pino';
import { BpftraceProgram, MonitorProgram, startStrace } from '../src/machinery/host/tracer/index.js';
import type { TracerOptions, TracerSession } from '../src/machinery/host/contracts.js';
import { compileFixtures, createTestCgroup, ofKind, readEvents, runInCgroup, type TestCgroup } from '../test/fixtures/tracer-harness.js';
import { guestTracerBench } from './tracer-guest.js';

/**
 * What behaviour tracing costs a syscall-heavy sample: the same workloads run untraced, under nestbox's
 * monitor (the eBPF tracer), under the bpftrace program it replaced and under the strace fallback, in
 * one run. The open+close loop is the worst case (every call is a record); `find` over /usr is a
 * realistic syscall-heavy program; the shell loop forks and executes a program again and again. Both
 * eBPF programs are loaded once, then armed and stopped (drained) per workload, as in service. Wall
 * times are the workload's own (see timed()). Beside them it prints what each side cost in CPU: the workload (BPF programs run in its time), the
 * service (this process) and the monitor's loader, all competing for the same cores. Prints figures;
 * missed aims do not fail it. With --guest, the qemu guest's monitor is then measured against an
 * untraced guest (bench/tracer-guest.ts: the same workloads, a tenth of the size, for TCG).
 *
 *   node dist/bench/tracer.js [opens=200000] [execs=300] [--guest]
 */
const GUEST = process.argv.includes('--guest');
const [OPENS = 200_000, EXECS = 300] = process.argv.slice(2).filter((arg) => arg !== '--guest').map(Number);
const REPEATS = 5;
/** Every traced run is cut off after this long: strace can be a hundred times slower. */
const RUN_LIMIT_MS = 120_000;
const AIMS: Record<string, number> = { find: 1.3, open: 2 };

const log = pino({ level: process.env.NESTBOX_BENCH_LOG ?? 'warn' });
const scratch = await mkdtemp(join(tmpdir(), 'nestbox-bench-tracer-'));
const bin = await compileFixtures(['tracer-open-loop'], scratch);

interface Workload {
  name: string;
  aim?: number;
  argv: string[];
}

const workloads: Workload[] = [
  { name: 'find /usr -name nestbox-none', aim: AIMS.find, argv: ['find', '/usr', '-name', 'nestbox-none'] },
  { name: `open+close x${OPENS}`, aim: AIMS.open, argv: [bin['tracer-open-loop']!, String(OPENS), '/etc/hostname'] },
  { name: `sh loop: fork+exec x${EXECS}`, argv: ['sh', '-c', `i=0; while [ $i -lt ${EXECS} ]; do /bin/true; i=$((i+1)); done`] },
];

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;

interface Timing {
  ms: number;
  seenMs: number;
}

/** The median of each clock over the runs. */
const medianTiming = (runs: Timing[]): Timing => ({ ms: median(runs.map((run) => run.ms)), seenMs: median(runs.map((run) => run.seenMs)) });

/**
 * The workload's wall time as it measures it itself: a bash in the cgroup reads its clock
 * ($EPOCHREALTIME, no extra process) around the run. The bench process is also the service that
 * decodes the records, so it notices the workload's exit late while it is busy; that later time is
 * kept too (`seenMs`) and printed beside it.
 */
async function timed(cgroupPath: string | null, argv: string[]): Promise<Timing> {
  const selfTimed = ['bash', '-c', 's=$EPOCHREALTIME; "$@"; c=$?; e=$EPOCHREALTIME; echo "nestbox-elapsed $s $e" >&2; exit $c', 'bash', ...argv];
  const t0 = performance.now();
  const limit = setTimeout(() => void runInCgroup(null, ['pkill', '-KILL', '-f', argv.join(' ')]), RUN_LIMIT_MS);
  const result = await runInCgroup(cgroupPath, selfTimed);
  clearTimeout(limit);
  const seenMs = performance.now() - t0;
  if (result.code !== 0 && argv[0] !== 'find') throw new Error(`${argv.join(' ')} failed: ${result.stderr}`);
  const clock = /nestbox-elapsed (\S+) (\S+)/.exec(result.stderr);
  if (!clock) throw new Error(`${argv.join(' ')} did not time itself: ${result.stderr.slice(-500)}`);
  return { ms: (Number(clock[2]) - Number(clock[1])) * 1000, seenMs };
}

/**
 * CPU time the workload's own processes spent per run (user + system, from the cgroup): what tracing
 * costs inside the traced program (BPF programs run in its system time), apart from the wall time lost
 * to the tracer's and the service's processes competing for the CPUs.
 */
function workloadCpuMs(cgroupPath: string, runs = REPEATS): number {
  const stat = new Map(readFileSync(join(cgroupPath, 'cpu.stat'), 'utf8').trim().split('\n').map((line) => line.split(' ') as [string, string]));
  return (Number(stat.get('user_usec')) + Number(stat.get('system_usec'))) / 1000 / runs;
}

const CLOCK_TICKS_PER_SECOND = Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }));

/** A process's CPU time so far (user + system), in ms: the monitor's loader, emptying the ring buffer. */
function processCpuMs(pid: number): number {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
  return ((Number(fields[11]) + Number(fields[12])) * 1000) / CLOCK_TICKS_PER_SECOND;
}

/** This process's CPU time (the service side: reading, decoding and writing the records), in ms. */
function serviceCpuMs(since: NodeJS.CpuUsage): number {
  const used = process.cpuUsage(since);
  return (used.user + used.system) / 1000;
}

/**
 * The workload untraced, in a cgroup no tracer records: one run at a time, each just before a traced run
 * (see underEbpf's `before`), so that both see the same machine when its load drifts.
 */
class Untraced {
  private readonly times: Timing[] = [];

  private constructor(
    private readonly cgroup: TestCgroup,
    private readonly workload: Workload,
  ) {}

  /** Also runs the workload once untimed: the first run of `find` reads a cold directory cache. */
  static async open(workload: Workload): Promise<Untraced> {
    const untraced = new Untraced(await createTestCgroup(), workload);
    await timed(untraced.cgroup.path, workload.argv);
    return untraced;
  }

  async run(): Promise<void> {
    this.times.push(await timed(this.cgroup.path, this.workload.argv));
  }

  /** The median run, and the CPU of a run (the warm-up counted as one). */
  async close(): Promise<Timing & { cpuMs: number }> {
    const cpuMs = workloadCpuMs(this.cgroup.path, this.times.length + 1);
    await this.cgroup.remove();
    return { ...medianTiming(this.times), cpuMs };
  }
}

interface EbpfRun extends Timing {
  events: number;
  opens: number;
  lost: number;
  armMs: number;
  /** stop(): drain everything, send the totals, forget the cgroup. */
  stopMs: number;
  /** The workload's CPU per run, and the service's over all runs and the stop. */
  cpuMs: number;
  serviceMs: number;
  /** The tracer's own process (nestbox's monitor's loader) over all runs and the stop, when known. */
  loaderMs: number | null;
}

interface Armable {
  arm(options: TracerOptions): Promise<TracerSession>;
  /** The tracer's own process, when its CPU time is to be shown. */
  readonly pid?: number | undefined;
}

/** Waits until the events file has stopped growing (the decoding thread has caught up). */
async function untilSettled(path: string): Promise<void> {
  let last = -1;
  for (;;) {
    await sleep(300);
    const size = existsSync(path) ? statSync(path).size : 0;
    if (size === last) return;
    last = size;
  }
}

/** One program serves every workload, as it serves task after task in service. */
async function underEbpf(program: Armable, workload: Workload, name: string, before?: () => Promise<void>): Promise<EbpfRun> {
  const cgroup = await createTestCgroup();
  const eventsPath = join(scratch, `${name}.jsonl`);
  try {
    const t0 = performance.now();
    const session = await program.arm({ cgroupV2Path: cgroup.path, eventsPath, log });
    const armMs = performance.now() - t0;
    const service = process.cpuUsage();
    const pid = program.pid;
    const loader = pid === undefined ? 0 : processCpuMs(pid);
    const times: Timing[] = [];
    for (let i = 0; i < REPEATS; i++) {
      await before?.();
      times.push(await timed(cgroup.path, workload.argv));
      // The records are decoded at low priority, after the run: the next untraced run must not compete with that.
      if (before) await untilSettled(eventsPath);
    }
    const t1 = performance.now();
    const { lost } = await session.stop();
    const stopMs = performance.now() - t1;
    const serviceMs = serviceCpuMs(service);
    const loaderMs = pid === undefined ? null : processCpuMs(pid) - loader;
    const cpuMs = workloadCpuMs(cgroup.path);
    const events = await readEvents(eventsPath);
    // A folded run of identical opens is one event that counts its repeats.
    const opens = ofKind(events, 'file.open').reduce((sum, e) => sum + 1 + (e.repeated ?? 0), 0);
    return { ...medianTiming(times), events: events.length, opens, lost, armMs, stopMs, cpuMs, serviceMs, loaderMs };
  } finally {
    await cgroup.remove();
  }
}

async function underStrace(workload: Workload): Promise<Timing & { events: number }> {
  const eventsPath = join(scratch, 'strace.jsonl');
  const session = await startStrace({ cgroupV2Path: '', eventsPath, log }, log, 'benchmark');
  const timing = await timed(null, session.wrap!(workload.argv));
  await session.stop();
  return { ...timing, events: (await readEvents(eventsPath)).length };
}

function ebpfLine(label: string, run: EbpfRun, base: Timing & { cpuMs: number }): string {
  const loader = run.loaderMs === null ? '' : `, loader CPU ${run.loaderMs.toFixed(0)} ms`;
  const cpu = `workload CPU ${run.cpuMs.toFixed(0)} ms x${(run.cpuMs / base.cpuMs).toFixed(2)}, service CPU ${run.serviceMs.toFixed(0)} ms${loader}`;
  const seen = `bench process saw ${run.seenMs.toFixed(0)} ms x${(run.seenMs / base.seenMs).toFixed(2)}`;
  return `  ${label.padEnd(14)} ${run.ms.toFixed(0).padStart(7)} ms  x${(run.ms / base.ms).toFixed(2)}  (${seen}; ${run.events} events, ${run.opens} file.open over ${REPEATS} runs, ${run.lost} lost; armed in ${run.armMs.toFixed(0)} ms, stopped in ${run.stopMs.toFixed(0)} ms; ${cpu})`;
}

async function launchTimed<T>(what: string, launch: () => Promise<T>): Promise<T> {
  const t0 = performance.now();
  const program = await launch();
  console.log(`${what} cold start (once per service): ${((performance.now() - t0) / 1000).toFixed(2)} s`);
  return program;
}

let monitor: MonitorProgram | undefined;
let bpftrace: BpftraceProgram | undefined;
try {
  monitor = await launchTimed('monitor (load + attach)', () => MonitorProgram.launch(log));
  bpftrace = await launchTimed('bpftrace (compile + attach)', () => BpftraceProgram.launch(log));
  for (const workload of workloads) {
    // A program that could not confirm a drain (a loaded machine) is ended: the next one is launched.
    if (!monitor.usable) monitor = await MonitorProgram.launch(log);
    if (!bpftrace.usable) bpftrace = await BpftraceProgram.launch(log);
    // Untraced and monitored runs take turns: a load that drifts meanwhile weighs on both alike.
    const untraced = await Untraced.open(workload);
    const mine = await underEbpf(monitor, workload, 'monitor', () => untraced.run());
    const base = await untraced.close();
    const old = await underEbpf(bpftrace, workload, 'bpftrace');
    const strace = await underStrace(workload);
    // Figures of a loaded machine are not a quiet one's: the load is printed beside them.
    console.log(`\n${workload.name}  (load average ${loadavg().map((load) => load.toFixed(2)).join(' ')})`);
    console.log(`  untraced       ${base.ms.toFixed(0).padStart(7)} ms  (bench process saw ${base.seenMs.toFixed(0)} ms; workload CPU ${base.cpuMs.toFixed(0)} ms)`);
    console.log(ebpfLine('monitor', mine, base));
    console.log(ebpfLine('bpftrace', old, base));
    console.log(`  strace         ${strace.ms.toFixed(0).padStart(7)} ms  x${(strace.ms / base.ms).toFixed(2)}  (${strace.events} events)`);
    if (workload.aim) {
      const met = mine.ms / base.ms <= workload.aim && mine.lost === 0;
      console.log(`  aim: monitor at most x${workload.aim}, nothing lost: ${met ? 'met' : 'missed'}`);
    }
  }
} finally {
  await monitor?.discard();
  await bpftrace?.discard();
  await rm(scratch, { recursive: true, force: true });
}
if (GUEST) await guestTracerBench({ opens: Math.round(OPENS / 10), execs: Math.round(EXECS / 3), findRoot: '/usr' });
