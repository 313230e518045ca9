import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pino } from 'pino';
import type { MachineRow } from '../src/db/schema.js';
import { createTaskNetwork } from '../src/machinery/host/network/index.js';
import { GuestMachine } from '../src/machinery/qemu/guest-machine.js';
import { prepareQemuMachine } from '../src/machinery/qemu/prepare.js';
import { QemuSession } from '../src/machinery/qemu/session.js';
import { parseQemuSettings } from '../src/machinery/qemu/settings.js';
import { createOverlay, createTaskDisk } from '../src/machinery/qemu/snapshot.js';
import { AnalysisPaths } from '../src/storage/layout.js';

/**
 * How fast a task gets a clean, running QEMU guest: the machine restored from its image's saved memory
 * state onto a fresh overlay (QEMU started, state loaded, guest resumed; then its agent answering),
 * beside a cold boot of the same image measured in the same run. Also the whole machinery start, task
 * network included. Builds the image first if it is not cached (minutes). Prints figures; missed aims
 * do not fail it.
 *
 *   node dist/bench/vm.js [restores=10] [memory_mb=512]
 */
const RESTORES = Number(process.argv[2] ?? 10);
const MEMORY_MB = Number(process.argv[3] ?? 512);
const SESSIONS = Math.max(3, Math.round(RESTORES / 2));
const COLD_BOOTS = 2;
const AIM_RUNNING_MS = 500;

const log = pino({ level: process.env.NESTBOX_BENCH_LOG ?? 'warn' });
const settings = parseQemuSettings({ memory_mb: MEMORY_MB, run_dir: '/run/nestbox/qemu-bench', screenshots: false }, 'bench');
const scratch = mkdtempSync(join(tmpdir(), 'nestbox-bench-vm-'));

interface Restore {
  spawnMs: number;
  loadedMs: number;
  runningMs: number;
  agentMs: number;
}

function medianOf(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = sorted.length / 2;
  return sorted.length % 2 ? sorted[Math.floor(middle)]! : (sorted[middle - 1]! + sorted[middle]!) / 2;
}

function stats(values: number[]): string {
  const [min, max] = [Math.min(...values), Math.max(...values)];
  return `median ${medianOf(values).toFixed(0).padStart(6)} ms   min ${min.toFixed(0).padStart(6)}   max ${max.toFixed(0).padStart(6)}`;
}

async function main(): Promise<void> {
  const prepared = performance.now();
  const context = await prepareQemuMachine('bench', settings, { log, internetInterface: '', createTaskNetwork });
  process.stdout.write(`machine prepared in ${((performance.now() - prepared) / 1000).toFixed(1)} s (image and ready state are cached after the first run)\n`);
  process.stdout.write(`accelerator ${context.hardware.accel}, ${MEMORY_MB} MiB, state ${context.ready.stateFile}\n\n`);

  const restores: Restore[] = [];
  for (let i = 0; i < RESTORES; i++) restores.push(await restoreOnce(context, i));
  process.stdout.write(`restore from the memory state (${RESTORES} runs), from task start:\n`);
  process.stdout.write(`  QEMU up (QMP)       ${stats(restores.map((r) => r.spawnMs))}\n`);
  process.stdout.write(`  state loaded        ${stats(restores.map((r) => r.loadedMs))}\n`);
  process.stdout.write(`  guest running       ${stats(restores.map((r) => r.runningMs))}\n`);
  process.stdout.write(`  agent answering     ${stats(restores.map((r) => r.agentMs))}\n\n`);

  const sessions: number[] = [];
  const networks: number[] = [];
  for (let i = 0; i < SESSIONS; i++) {
    const timings = await sessionOnce(context, i);
    sessions.push(timings.totalMs);
    networks.push(timings.networkMs);
  }
  process.stdout.write(`whole machinery start (task network + restore + agent answering, ${SESSIONS} runs):\n`);
  process.stdout.write(`  task network        ${stats(networks)}\n`);
  process.stdout.write(`  total               ${stats(sessions)}\n\n`);

  const boots: number[] = [];
  for (let i = 0; i < COLD_BOOTS; i++) boots.push(await coldBootOnce(context, i));
  process.stdout.write(`cold boot of the same image until its agent answers (${COLD_BOOTS} runs):\n`);
  process.stdout.write(`  agent answering     ${stats(boots)}\n\n`);

  const running = medianOf(restores.map((r) => r.runningMs));
  process.stdout.write(
    `clean running guest in ${running.toFixed(0)} ms (aim < ${AIM_RUNNING_MS} ms: ${running < AIM_RUNNING_MS ? 'met' : 'missed'}); ` +
      `${(medianOf(boots) / medianOf(restores.map((r) => r.agentMs))).toFixed(0)}x faster to a working agent than a cold boot\n`,
  );
}

async function restoreOnce(context: Awaited<ReturnType<typeof prepareQemuMachine>>, i: number): Promise<Restore> {
  const runDir = join(settings.run_dir, `restore-${process.pid}-${i}`);
  const started = performance.now();
  const disk = join(scratch, `restore-${i}.qcow2`);
  await createTaskDisk(context.ready, disk);
  const machine = await GuestMachine.start({ hardware: context.hardware, runDir, processName: 'nbq-bench', disk, start: { stateFile: context.ready.stateFile } });
  try {
    const spawnMs = performance.now() - started;
    await machine.waitUntilLoaded(30_000);
    const loadedMs = performance.now() - started;
    await machine.resume();
    const runningMs = performance.now() - started;
    await machine.agent.waitUntilReady(30_000);
    return { spawnMs, loadedMs, runningMs, agentMs: performance.now() - started };
  } finally {
    await machine.kill();
    rmSync(runDir, { recursive: true, force: true });
    rmSync(disk, { force: true });
  }
}

async function sessionOnce(context: Awaited<ReturnType<typeof prepareQemuMachine>>, i: number) {
  const paths = new AnalysisPaths(join(scratch, `session-${i}`));
  paths.create();
  const session = await QemuSession.start(context, {
    taskId: 7000 + i,
    machine: { name: 'bench' } as MachineRow,
    paths,
    category: 'url',
    url: 'http://example.test/',
    package: '',
    options: {},
    timeoutSeconds: 10,
    enforceTimeout: false,
    memory: false,
    route: 'inetsim',
    clock: new Date().toISOString(),
    log,
  });
  await session.destroy();
  return session.timings!;
}

async function coldBootOnce(context: Awaited<ReturnType<typeof prepareQemuMachine>>, i: number): Promise<number> {
  const image = context.image!;
  const runDir = join(settings.run_dir, `boot-${process.pid}-${i}`);
  const disk = join(scratch, `boot-${i}.qcow2`);
  const started = performance.now();
  await createOverlay(image.baseDisk, disk);
  const machine = await GuestMachine.start({ hardware: context.hardware, runDir, processName: 'nbq-bench', disk, start: { boot: { kernel: image.kernel, initrd: image.initrd } } });
  try {
    await machine.agent.waitUntilReady(settings.boot_timeout * 1000);
    return performance.now() - started;
  } finally {
    await machine.kill();
    rmSync(runDir, { recursive: true, force: true });
    rmSync(disk, { force: true });
  }
}

try {
  await main();
} finally {
  rmSync(scratch, { recursive: true, force: true });
}
