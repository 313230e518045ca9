import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pino } from 'pino';
import { configSchema, type Config } from '../src/config/schema.js';
import { detectCgroupLayout } from '../src/machinery/linux/cgroups.js';
import { createLinuxMachinery, type LinuxMachinery, type LinuxMachineryParts, type LinuxSession } from '../src/machinery/linux/index.js';
import type { LinuxSettings } from '../src/machinery/linux/settings.js';
import type { AnalysisRequest, Machinery, RunResult } from '../src/machinery/types.js';
import { AnalysisPaths } from '../src/storage/layout.js';
import { analysisRequest } from './helpers/analysis-request.js';

/**
 * Shared by the linux-* tests and the machine benchmark: a real linux machinery (real guest root,
 * namespaces, cgroups, overlay, task network) and checks that a machine left nothing behind on the host.
 */
export const log = pino({ level: process.env.NESTBOX_TEST_LOG ?? 'silent' });

/** `sections`: other sections of the configuration (dropped_files...). */
export function testConfig(settings: Partial<LinuxSettings> = {}, sections: Record<string, unknown> = {}): Config {
  return configSchema.parse({ ...sections, machines: [{ name: 'linux1', settings: { tracing: false, screenshots: false, ...settings } }] });
}

const made: LinuxMachinery[] = [];

/** A machinery as the service makes it (it keeps a spare network and tracer ready); end it with closeTestMachineries(). */
export function testMachinery(settings: Partial<LinuxSettings> = {}, parts: Partial<LinuxMachineryParts> = {}, sections: Record<string, unknown> = {}): LinuxMachinery {
  const machinery = createLinuxMachinery(testConfig(settings, sections), log, parts);
  made.push(machinery);
  return machinery;
}

/** Ends what every machinery made here keeps ready between tasks, as the service does when it stops. */
export async function closeTestMachineries(): Promise<void> {
  for (const machinery of made.splice(0)) await machinery.close();
}

export const workDir = mkdtempSync(join(tmpdir(), 'nestbox-linux-test-'));
process.once('exit', () => rmSync(workDir, { recursive: true, force: true }));
let nextTask = 1;

export interface RunOutcome {
  result: RunResult;
  paths: AnalysisPaths;
  machineId: string;
  /** analysis.log's text. */
  log: string;
  /** Lines of files.json. */
  files: Array<{ path: string; filepath: string | null; pids: number[] }>;
  /** Milliseconds spent in each step of the machine's life; teardown is stop + collect + destroy. */
  timings: { start: number; run: number; stop: number; collect: number; destroy: number; teardown: number };
}

export interface RunOptions extends Partial<Omit<AnalysisRequest, 'paths' | 'machine' | 'log' | 'samplePath'>> {
  /** A sample file to write and analyse: its name and content. */
  sample?: { name: string; content: string | Buffer; mode?: number };
  samplePath?: string;
  paths?: AnalysisPaths;
  /** Called while the sample runs, with the machine id (for checks from the host). */
  during?: (machineId: string) => Promise<void>;
}

export async function runInMachine(machinery: Machinery, options: RunOptions = {}): Promise<RunOutcome> {
  const taskId = options.taskId ?? nextTask++;
  const paths = options.paths ?? new AnalysisPaths(join(workDir, `task-${taskId}-${Date.now()}`));
  let samplePath = options.samplePath;
  if (options.sample) {
    samplePath = join(workDir, `${taskId}-${options.sample.name}`);
    writeFileSync(samplePath, options.sample.content, { mode: options.sample.mode ?? 0o644 });
    // The machine sees the submitted name, not our temporary one.
    const named = join(workDir, `dir-${taskId}-${Date.now()}`);
    execFileSync('mkdir', ['-p', named]);
    execFileSync('mv', [samplePath, join(named, options.sample.name)]);
    samplePath = join(named, options.sample.name);
  }
  const { sample: _sample, during, ...rest } = options;
  void _sample;
  const request = analysisRequest('linux1', {
    taskId,
    paths,
    category: options.url ? 'url' : 'file',
    route: 'none',
    log,
    ...rest,
    ...(samplePath ? { samplePath } : {}),
  });
  let time = performance.now();
  const lap = () => {
    const now = performance.now();
    const spent = now - time;
    time = now;
    return spent;
  };
  const session = await machinery.start(request);
  const start = lap();
  const machineId = (session as LinuxSession).id;
  try {
    const running = session.run(new AbortController().signal);
    if (during) await during(machineId);
    const result = await running;
    const run = lap();
    await session.stop();
    const stop = lap();
    await session.collect();
    const collect = lap();
    await session.destroy();
    const destroy = lap();
    const analysisLog = existsSync(paths.analysisLog) ? readFileSync(paths.analysisLog, 'utf8') : '';
    const files = existsSync(paths.filesJson)
      ? readFileSync(paths.filesJson, 'utf8').split('\n').filter(Boolean).map((line) => JSON.parse(line))
      : [];
    const timings = { start, run, stop, collect, destroy, teardown: stop + collect + destroy };
    return { result, paths, machineId, log: analysisLog, files, timings };
  } finally {
    await session.destroy();
  }
}

/** Lines the sample printed (analysis.log lines from source `sample`). */
export function sampleOutput(outcome: RunOutcome): string[] {
  return outcome.log
    .split('\n')
    .filter((line) => line.includes(' [sample] '))
    .map((line) => line.slice(line.indexOf(': ') + 2));
}

/** Machine ids with a run folder right now (this process's and others'). */
export function runningMachineIds(runDir = '/run/nestbox/machines'): string[] {
  return existsSync(runDir) ? readdirSync(runDir).filter((name) => name !== 'seccomp.bpf') : [];
}

/** What a machine could leave on the host: each list must be empty once it is destroyed. */
export function leftoversOf(machineId: string): Record<string, string[]> {
  const layout = detectCgroupLayout();
  const name = `nestbox-machine-${machineId}`;
  const bases = [layout.v2Base, ...Object.values(layout.v1Base)];
  return {
    mounts: readFileSync('/proc/self/mountinfo', 'utf8').split('\n').filter((line) => line.includes(machineId)),
    cgroups: bases.map((base) => join(base, name)).filter((path) => existsSync(path)),
    runFolders: runningMachineIds().filter((id) => id === machineId),
    namespaces: execFileSync('ip', ['netns', 'list'], { encoding: 'utf8' }).split('\n').filter((line) => line.includes(machineId)),
    processes: processesMentioning(machineId),
  };
}

function processesMentioning(text: string): string[] {
  const found: string[] = [];
  for (const pid of readdirSync('/proc').filter((entry) => /^\d+$/.test(entry))) {
    try {
      const cmdline = readFileSync(`/proc/${pid}/cmdline`, 'utf8').replace(/\0/g, ' ');
      if (cmdline.includes(text)) found.push(`${pid} ${cmdline}`);
    } catch {
      // exited meanwhile
    }
  }
  return found;
}

export function assertNothingLeft(assertDeep: (actual: unknown, expected: unknown, message?: string) => void, machineId: string): void {
  if (!machineId) throw new Error('no machine id was seen');
  assertDeep(leftoversOf(machineId), { mounts: [], cgroups: [], runFolders: [], namespaces: [], processes: [] }, `machine ${machineId} left something behind`);
}
