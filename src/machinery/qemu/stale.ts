import { readdir, readFile, rm } from 'node:fs/promises';
import { join } from 'node:path';
import type { Logger } from 'pino';
import { runCommand } from '../host/command.js';
import { isMachineId } from '../host/machine-id.js';
import { isClaimed } from '../host/ownership.js';
import { removeTap, TAP_PREFIX } from './analysis-link.js';

/**
 * Removes what QEMU machines of dead nestbox processes left behind in one run folder, found by nestbox's
 * naming: QEMU processes named `nbq-<machine id>` started with a path in that folder, host tap devices of
 * that name, run folders named by machine id. A machine whose owner (recorded in its run folder) still
 * runs belongs to another live nestbox and is left alone, and so is every machine of another run folder:
 * two nestbox processes with their own run folders never take each other's machines. QEMU normally dies
 * with its owner (parent-death signal): this is the backstop.
 */
export interface StaleReport {
  processes: number[];
  taps: string[];
  folders: string[];
}

export async function cleanupStaleQemu(runDir: string, log: Logger): Promise<StaleReport> {
  const live = new Set<string>();
  const dead: string[] = [];
  for (const id of (await readdir(runDir).catch(() => [] as string[])).filter(isMachineId)) {
    if (await isClaimed(join(runDir, id))) live.add(id);
    else dead.push(id);
  }
  const report: StaleReport = { processes: [], taps: [], folders: [] };
  const ours = new Set(dead);
  for (const { pid, id, argv } of await qemuProcesses()) {
    if (live.has(id) || !argv.some((arg) => arg.includes(`${join(runDir, id)}/`))) continue;
    ours.add(id);
    try {
      process.kill(pid, 'SIGKILL');
      report.processes.push(pid);
    } catch {
      // already gone
    }
  }
  for (const tap of await hostTaps()) {
    if (!ours.has(tap.slice(TAP_PREFIX.length))) continue;
    await removeTap(tap);
    report.taps.push(tap);
  }
  for (const id of dead) {
    await rm(join(runDir, id), { recursive: true, force: true });
    report.folders.push(id);
  }
  if (report.processes.length + report.taps.length + report.folders.length > 0) log.warn(report, 'removed stale QEMU machines');
  return report;
}

/** nestbox's QEMU processes, of any run folder: named nbq-<id> and started with `-name nestbox,...`. */
async function qemuProcesses(): Promise<{ pid: number; id: string; argv: string[] }[]> {
  const found: { pid: number; id: string; argv: string[] }[] = [];
  for (const entry of await readdir('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const comm = (await readFile(`/proc/${entry}/comm`, 'utf8')).trim();
      if (!comm.startsWith(TAP_PREFIX)) continue;
      const argv = (await readFile(`/proc/${entry}/cmdline`, 'utf8')).split('\0');
      if (argv.includes(`nestbox,process=${comm}`)) found.push({ pid: Number(entry), id: comm.slice(TAP_PREFIX.length), argv });
    } catch {
      // the process ended while we looked
    }
  }
  return found;
}

async function hostTaps(): Promise<string[]> {
  const result = await runCommand(['ip', '-json', 'link', 'show']);
  if (result.code !== 0) return [];
  const links = JSON.parse(result.stdout) as { ifname: string }[];
  return links.map((link) => link.ifname).filter((name) => name.startsWith(TAP_PREFIX) && isMachineId(name.slice(TAP_PREFIX.length)));
}
