import { createReadStream } from 'node:fs';
import { createInterface } from 'node:readline';
import { lstat } from 'node:fs/promises';
import type { BehaviorEvent } from './events.js';
import type { SkippedSleep } from './report-types.js';

/**
 * The sample supervisor's record (logs/supervisor.jsonl, both machine kinds): the sleeps, timers and waits
 * it cut short. A call it answered itself never ran, so the tracer never saw it (seccomp comes before the
 * raw_syscalls tracepoint): those calls are counted from here. The others it changed and let go on.
 */

/** Lines read at most: the supervisor records 200 cut-short calls per task. */
const MAX_LINES = 10000;

/**
 * The calls native/supervisor.c answers itself when it cuts them short; alarm, setitimer and
 * timer_settime it rewrites and lets go on, so the tracer counts them.
 */
const ANSWERED_CALLS = new Set(['nanosleep', 'clock_nanosleep', 'timerfd_settime', 'select', 'pselect6', 'poll', 'ppoll', 'epoll_wait', 'epoll_pwait', 'epoll_pwait2']);

/** The supervisor's sleep lines; anything else or malformed is left out. */
export async function skippedSleeps(path: string): Promise<SkippedSleep[]> {
  const sleeps: SkippedSleep[] = [];
  // A planted link or FIFO in the analysis folder is no record.
  if (!(await lstat(path).catch(() => undefined))?.isFile()) return sleeps;
  for await (const line of createInterface({ input: createReadStream(path), crlfDelay: Infinity })) {
    const sleep = sleepOf(line);
    if (sleep) sleeps.push(sleep);
    if (sleeps.length >= MAX_LINES) break;
  }
  return sleeps;
}

function sleepOf(line: string): SkippedSleep | undefined {
  let record: Record<string, unknown>;
  try {
    record = JSON.parse(line) as Record<string, unknown>;
  } catch {
    return undefined;
  }
  const { event, pid, call, seconds, time } = record;
  if (event !== 'sleep' || typeof pid !== 'number' || typeof call !== 'string' || typeof seconds !== 'number' || typeof time !== 'number') return undefined;
  return { pid, call, seconds, time };
}

/** Calls by process and name. */
export type CallCounts = ReadonlyMap<number, ReadonlyMap<string, number>>;

/** The calls the supervisor answered without letting them run, by process and name. */
export function answeredCalls(sleeps: readonly SkippedSleep[]): CallCounts {
  const counts = new Map<number, Map<string, number>>();
  for (const { pid, call } of sleeps) {
    if (!ANSWERED_CALLS.has(call)) continue;
    const calls = counts.get(pid) ?? new Map<string, number>();
    calls.set(call, (calls.get(call) ?? 0) + 1);
    counts.set(pid, calls);
  }
  return counts;
}

/**
 * The calls the supervisor answered, as events of the behaviour log (`process.sleep`, `shortened`), in
 * time order: processing puts them among the tracer's events, so that they are listed with the process's
 * calls. Calls it let go on are the tracer's to report.
 */
export function answeredCallEvents(sleeps: readonly SkippedSleep[]): BehaviorEvent[] {
  return sleeps
    .filter(({ call }) => ANSWERED_CALLS.has(call))
    .map(({ pid, call, seconds, time }): BehaviorEvent => ({ ts: time, pid, ppid: 0, tid: pid, comm: '', api: call, kind: 'process.sleep', seconds, ret: 0, shortened: true }))
    .sort((a, b) => a.ts - b.ts);
}
