import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { AnalysisLog } from './analysis-log.js';
import type { MachineCgroups } from './cgroups.js';
import type { FilesJsonLine } from './dropped-files.js';
import { dumpProcessMemory } from './memory-dump.js';

/**
 * Dumps the memory of every process the sample left running, with its cgroup frozen so that the dumps
 * are consistent; returns their files.json lines. `launcherPid` is the sandbox's launcher: it and the
 * machine's init (its child) are nestbox's, not the sample's.
 */
export async function dumpSampleMemory(cgroups: MachineCgroups, launcherPid: number | undefined, memoryDir: string, analysisLog: AnalysisLog): Promise<FilesJsonLine[]> {
  if (!(await cgroups.populated('sample'))) {
    analysisLog.info('memory: no process of the sample was left to dump');
    return [];
  }
  await cgroups.freeze('sample');
  const lines: FilesJsonLine[] = [];
  for (const pid of await samplePids(cgroups, launcherPid)) {
    const name = `${pid}.dmp`;
    const dumped = await dumpProcessMemory(pid, join(memoryDir, name)).catch(() => null);
    if (!dumped) continue;
    lines.push({ path: `memory/${name}`, filepath: null, pids: [pid] });
    analysisLog.info(`memory: dumped process ${pid} (${dumped.bytes} bytes in ${dumped.regions} regions)`);
  }
  return lines;
}

/** Host pids of the sample's processes: the sample leaf less the launcher and the init. */
async function samplePids(cgroups: MachineCgroups, launcherPid: number | undefined): Promise<number[]> {
  const pids = await cgroups.pids('sample');
  const parents = await Promise.all(pids.map((pid) => parentPid(pid)));
  const init = pids.filter((_, index) => parents[index] === launcherPid);
  return pids.filter((pid) => pid !== launcherPid && !init.includes(pid));
}

async function parentPid(pid: number): Promise<number> {
  const stat = await readFile(`/proc/${pid}/stat`, 'utf8').catch(() => '');
  return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1] ?? 0);
}
