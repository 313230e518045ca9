import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { pino } from 'pino';
import { createTaskNetwork } from '../src/machinery/host/network/index.js';
import { prepareQemuMachine } from '../src/machinery/qemu/prepare.js';
import { QemuSession, type QemuMachineContext } from '../src/machinery/qemu/session.js';
import { parseQemuSettings } from '../src/machinery/qemu/settings.js';
import { AnalysisPaths } from '../src/storage/layout.js';
import { fixtureSource } from '../test/fixtures/tracer-harness.js';
import { analysisRequest, runToCollection } from '../test/helpers/analysis-request.js';
import { zipSample } from '../test/helpers/zip-sample.js';

/**
 * What nestbox's monitor costs inside the qemu guest: the workloads of bench/tracer.ts, scaled down for
 * TCG, run in the guest by a sample (through nestbox's analyzer, traced by the guest's monitor on the
 * sample cgroup). Each run is made twice in a row: in the sample cgroup, traced, and in a cgroup of its
 * own beside it, untraced (the monitor stays loaded, as on the host bench); which comes first alternates.
 * Side by side in one guest, both see the same load of a shared host, which two separate tasks did not
 * (the figures swung by 2x from one minute to the next). The guest times each run itself (its monotonic
 * clock); the host's decoding of the trace competes with QEMU for the CPUs, as in service. The sample
 * supervisor watches both. Prints figures; missed aims do not fail it.
 *
 *   node dist/bench/tracer-guest.js [opens=20000] [execs=100] [find=/usr]
 *   node dist/bench/tracer.js ... --guest    (after the host figures)
 */
export interface GuestBenchOptions {
  opens: number;
  execs: number;
  findRoot: string;
}

const RUNS = 5;
/** The hardware of the qemu tests (qemu-machine, qemu-guest-trace): the same ready state serves all. */
const MEMORY_MB = 256;
const TASK_TIMEOUT_S = 900;
const MARK = 'nestbox-bench';

/** Runs in the guest: times each workload RUNS times traced and RUNS times untraced, in pairs. */
const DRIVER = String.raw`
import os, subprocess, sys, time
here, runs, opens, execs, root = sys.argv[1], int(sys.argv[2]), sys.argv[3], int(sys.argv[4]), sys.argv[5]
# Both kinds of run join their cgroup the same way (a traced one joins the one it is in): a preexec_fn
# costs Python a full fork and some Python in the child, slow under TCG, and must weigh on both alike.
SAMPLE = "/sys/fs/cgroup" + open("/proc/self/cgroup").read().strip().split("::")[-1]
UNTRACED = "/sys/fs/cgroup/nestbox-bench-untraced"
os.makedirs(UNTRACED, exist_ok=True)
def joining(cgroup):
    def join():
        with open(cgroup + "/cgroup.procs", "w") as procs:
            procs.write(str(os.getpid()))
    return join
loop = "i=0; while [ $i -lt %d ]; do /bin/true; i=$((i+1)); done" % execs
workloads = [("find", ["find", root, "-name", "nestbox-none"]), ("open", [here + "/open-loop", opens, "/etc/hostname"]), ("exec", ["sh", "-c", loop])]
entries = subprocess.run(["find", root], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL).stdout.count(b"\n")
print("${MARK}-entries %d" % entries, flush=True)
def timed(name, argv, traced):
    started = time.monotonic()
    subprocess.run(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, preexec_fn=joining(SAMPLE if traced else UNTRACED))
    print("${MARK} %s %s %.1f" % (name, "traced" if traced else "untraced", (time.monotonic() - started) * 1000), flush=True)
for name, argv in workloads:
    for run in range(runs):
        for traced in ([False, True] if run % 2 == 0 else [True, False]):
            timed(name, argv, traced)
os.rmdir(UNTRACED)
`;

interface GuestRun {
  /** Milliseconds of each run, by workload and `traced`/`untraced`. */
  times: Map<string, number[]>;
  entries: number;
  events: number;
  lost: number;
  tracer: string;
}

async function sampleZip(scratch: string, options: GuestBenchOptions): Promise<Buffer> {
  const openLoop = join(scratch, 'open-loop');
  execFileSync('gcc', ['-static', '-O2', '-o', openLoop, fixtureSource('tracer-open-loop.c')]);
  const script = `#!/bin/sh\nhere=$(dirname "$0")\nchmod +x "$here/open-loop"\nexec python3 "$here/driver.py" "$here" ${RUNS} ${options.opens} ${options.execs} '${options.findRoot}'\n`;
  return zipSample([
    ['run.sh', script],
    ['driver.py', DRIVER, 0o100644],
    ['open-loop', readFileSync(openLoop)],
  ]);
}

/** The figures the driver printed into the task's analysis log. */
function parseTimes(analysisLog: string): { times: Map<string, number[]>; entries: number } {
  const times = new Map<string, number[]>();
  for (const [, name, how, ms] of analysisLog.matchAll(new RegExp(`${MARK} (\\w+) (traced|untraced) ([\\d.]+)`, 'g'))) {
    const key = `${name} ${how}`;
    times.set(key, [...(times.get(key) ?? []), Number(ms)]);
  }
  const entries = Number(new RegExp(`${MARK}-entries (\\d+)`).exec(analysisLog)?.[1] ?? 0);
  return { times, entries };
}

/** What the trace says: its events, the records the monitor could not keep, the tracer's name. */
function traceFacts(eventsPath: string): Pick<GuestRun, 'events' | 'lost' | 'tracer'> {
  let events = 0;
  let lost = 0;
  let tracer = 'none';
  let text = '';
  try {
    text = readFileSync(eventsPath, 'utf8');
  } catch {
    return { events, lost, tracer };
  }
  for (const line of text.split('\n')) {
    if (!line) continue;
    const event = JSON.parse(line) as { kind: string; count?: number; tracer?: string };
    events++;
    if (event.kind === 'tracer.lost') lost += event.count ?? 0;
    if (event.kind === 'tracer.info') tracer = event.tracer ?? tracer;
  }
  return { events, lost, tracer };
}

async function runTask(context: QemuMachineContext, scratch: string, zip: Buffer, taskId: number): Promise<GuestRun> {
  const paths = new AnalysisPaths(join(scratch, `task-${taskId}`));
  paths.create();
  const samplePath = join(scratch, `sample-${taskId}.zip`);
  writeFileSync(samplePath, zip);
  const log = pino({ level: process.env.NESTBOX_BENCH_LOG ?? 'warn' });
  const request = { taskId, paths, samplePath, log, package: 'zip', options: { file: 'run.sh' }, timeoutSeconds: TASK_TIMEOUT_S, route: 'none' as const };
  await runToCollection(await QemuSession.start(context, analysisRequest(context.name, request)));
  const analysisLog = readFileSync(paths.analysisLog, 'utf8');
  const { times, entries } = parseTimes(analysisLog);
  if (times.size === 0) throw new Error(`the guest printed no figures; its analysis log:\n${analysisLog.slice(-4000)}`);
  return { times, entries, ...traceFacts(join(paths.logs, 'events.jsonl')) };
}

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)] ?? NaN;

function printComparison(options: GuestBenchOptions, run: GuestRun): void {
  const labels: Record<string, string> = {
    find: `find ${options.findRoot} (${run.entries} entries)`,
    open: `open+close x${options.opens}`,
    exec: `sh loop: fork+exec x${options.execs}`,
  };
  console.log(`\nguest monitor (qemu guest, median of ${RUNS} runs each, timed in the guest; load average ${loadavg().map((load) => load.toFixed(2)).join(' ')})`);
  for (const [name, label] of Object.entries(labels)) {
    const untraced = run.times.get(`${name} untraced`) ?? [];
    const traced = run.times.get(`${name} traced`) ?? [];
    const base = median(untraced);
    // Each pair ran back to back, under the same load: the median of their ratios is steadier. A host's
    // load only ever adds to a run (QEMU waits for a CPU while the guest's clock goes on): the fastest
    // runs are the nearest to the cost itself.
    const pairs = median(traced.map((ms, i) => ms / (untraced[i] ?? NaN)));
    const fastest = Math.min(...traced) / Math.min(...untraced);
    console.log(`  ${label}`);
    console.log(`    untraced       ${base.toFixed(0).padStart(7)} ms         (runs ${untraced.join(', ')})`);
    console.log(`    guest monitor  ${median(traced).toFixed(0).padStart(7)} ms  x${(median(traced) / base).toFixed(2)}  (runs ${traced.join(', ')})`);
    console.log(`                   median of the pairs' ratios x${pairs.toFixed(2)}, fastest against fastest x${fastest.toFixed(2)}`);
  }
  console.log(`  the task's trace: tracer ${run.tracer}, ${run.events} events, ${run.lost} lost`);
}

/** Prepares the qemu machine (builds its image and ready state if not cached), then runs the task. */
export async function guestTracerBench(options: GuestBenchOptions): Promise<void> {
  const log = pino({ level: process.env.NESTBOX_BENCH_LOG ?? 'warn' });
  const settings = parseQemuSettings({ memory_mb: MEMORY_MB, run_dir: '/run/nestbox/qemu-bench-tracer', screenshots: false, collect_grace: 30 }, 'bench-guest');
  const prepared = performance.now();
  const context = await prepareQemuMachine('bench-guest', settings, { log, internetInterface: '', createTaskNetwork });
  console.log(`\nqemu machine prepared in ${((performance.now() - prepared) / 1000).toFixed(1)} s: accelerator ${context.hardware.accel}, ${MEMORY_MB} MiB`);
  const scratch = mkdtempSync(join(tmpdir(), 'nestbox-bench-guest-'));
  try {
    printComparison(options, await runTask(context, scratch, await sampleZip(scratch, options), 7100));
  } finally {
    rmSync(scratch, { recursive: true, force: true });
  }
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  await guestTracerBench({ opens: Number(process.argv[2] ?? 20_000), execs: Number(process.argv[3] ?? 100), findRoot: process.argv[4] ?? '/usr' });
}
