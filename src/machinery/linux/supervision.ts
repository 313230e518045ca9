import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { AnalysisLog } from './analysis-log.js';
import type { FilesJsonLine } from './dropped-files.js';
import { dumpProcessMemory } from './memory-dump.js';
import type { UnrecordedCalls } from '../../report/supervisor-log.js';
import { type CapturedFile, type ShortenedSleep, TIMER_CALLS, WAIT_CALLS } from './sample-supervisor.js';

/** What the sample's supervisor did during one run, as the session keeps it for collect(). */
export interface Supervision {
  sleeps: ShortenedSleep[];
  /** The shortened calls past the supervisor's records, counted. */
  unrecorded: UnrecordedCalls[];
  captured: CapturedFile[];
  /** files.json lines of the processes dumped as they exited. */
  exitDumps: FilesJsonLine[];
  exitDumpBytes: number;
  /** Set once the limits stopped further dumps. */
  exitDumpsStopped: boolean;
}

function shortenedText({ call, seconds }: ShortenedSleep): string {
  if ((TIMER_CALLS as readonly string[]).includes(call)) return `set a timer of ${seconds} s (${call}): it fired early`;
  if ((WAIT_CALLS as readonly string[]).includes(call)) return `waited up to ${seconds} s (${call}) with nothing ready: the wait ended early`;
  return `asked to sleep ${seconds} s (${call}): the sleep returned at once`;
}

const REASON_TEXT = { exec: 'executed', delete: 'deleted' } as const;

export const recordSupervision = {
  sleep(sleep: ShortenedSleep, supervision: Supervision, analysisLog: AnalysisLog): void {
    supervision.sleeps.push(sleep);
    analysisLog.info(`process ${sleep.pid} ${shortenedText(sleep)}`, 'supervisor');
  },
  unrecorded(calls: UnrecordedCalls, supervision: Supervision, analysisLog: AnalysisLog): void {
    supervision.unrecorded.push(calls);
    analysisLog.info(`${calls.count} more ${calls.call || 'calls'} of process ${calls.pid} were shortened (counted, not each recorded)`, 'supervisor');
  },
  capture(file: CapturedFile, supervision: Supervision, analysisLog: AnalysisLog): void {
    supervision.captured.push(file);
    analysisLog.info(`captured ${file.filepath} (${file.size} bytes) as process ${file.pid} ${REASON_TEXT[file.reason]} it`, 'supervisor');
  },
};

/** A sample that starts processes in a loop must not fill the host disk with their dumps. */
export const EXIT_DUMP_LIMITS = { dumps: 200, bytes: 4 * 2 ** 30 };

/** Dumps a process stopped at its exit_group by the supervisor, in the end-of-run dumps' format. */
export async function dumpExitingProcess(pid: number, memoryDir: string, supervision: Supervision, analysisLog: AnalysisLog): Promise<void> {
  if (supervision.exitDumps.length >= EXIT_DUMP_LIMITS.dumps || supervision.exitDumpBytes >= EXIT_DUMP_LIMITS.bytes) {
    if (!supervision.exitDumpsStopped) analysisLog.info(`memory: no more dumps of exiting processes (limits: ${EXIT_DUMP_LIMITS.dumps} dumps, ${EXIT_DUMP_LIMITS.bytes} bytes)`);
    supervision.exitDumpsStopped = true;
    return;
  }
  const name = `${pid}.dmp`;
  const dumped = await dumpProcessMemory(pid, join(memoryDir, name)).catch(() => null);
  if (!dumped) return;
  supervision.exitDumpBytes += dumped.bytes;
  supervision.exitDumps.push({ path: `memory/${name}`, filepath: null, pids: [pid] });
  analysisLog.info(`memory: dumped process ${pid} as it exited (${dumped.bytes} bytes in ${dumped.regions} regions)`);
}

/** The task's record of the supervisor (logs/supervisor.jsonl): shortened sleeps and captured files, no host path. */
export async function writeSupervisionLog(path: string, supervision: Supervision): Promise<void> {
  const lines = [
    ...supervision.sleeps.map((sleep) => ({ event: 'sleep', ...sleep })),
    ...supervision.unrecorded.map((calls) => ({ event: 'unrecorded', ...calls })),
    ...supervision.captured.map(({ reason, pid, filepath, size, sha256 }) => ({ event: 'capture', reason, pid, filepath, size, sha256 })),
  ];
  await writeFile(path, lines.map((line) => `${JSON.stringify(line)}\n`).join(''));
}
