import { createReadStream } from 'node:fs';
import { lstat } from 'node:fs/promises';
import { createInterface } from 'node:readline';
import type { BehaviorEvent } from './events.js';
import type { SkippedSleep } from './report-types.js';

/**
 * The sample supervisor's record (logs/supervisor.jsonl, both machine kinds): the sleeps, timers and waits
 * it cut short, each recorded up to 200 per task, then counted by process and call. A call it answered
 * itself never ran, so the tracer never saw it (seccomp comes before the raw_syscalls tracepoint): those
 * calls are counted and listed from here. The others it changed and let go on.
 */

/** Lines read at most: the supervisor records 200 cut-short calls per task, and 257 counts. */
const MAX_LINES = 10000;

/**
 * The calls native/supervisor.c answers itself when it cuts them short; alarm, setitimer and
 * timer_settime it rewrites and lets go on, so the tracer counts them.
 */
const ANSWERED_CALLS = new Set(['nanosleep', 'clock_nanosleep', 'timerfd_settime', 'select', 'pselect6', 'poll', 'ppoll', 'epoll_wait', 'epoll_pwait', 'epoll_pwait2']);

/** Cut-short calls of one process past the records, counted (process 0: of processes past its table). */
export interface UnrecordedCalls {
  pid: number;
  call: string;
  count: number;
}

export interface SupervisorRecord {
  sleeps: SkippedSleep[];
  unrecorded: UnrecordedCalls[];
}

/** The supervisor's sleep and count lines; anything else or malformed is left out. */
export async function readSupervisorRecord(path: string): Promise<SupervisorRecord> {
  const record: SupervisorRecord = { sleeps: [], unrecorded: [] };
  // A planted link or FIFO in the analysis folder is no record.
  if (!(await lstat(path).catch(() => undefined))?.isFile()) return record;
  let lines = 0;
  for await (const line of createInterface({ input: createReadStream(path), crlfDelay: Infinity })) {
    const fields = fieldsOf(line);
    const sleep = fields && sleepOf(fields);
    const counted = fields && unrecordedOf(fields);
    if (sleep) record.sleeps.push(sleep);
    if (counted) record.unrecorded.push(counted);
    if (++lines >= MAX_LINES) break;
  }
  return record;
}

function fieldsOf(line: string): Record<string, unknown> | undefined {
  try {
    const fields = JSON.parse(line) as unknown;
    return typeof fields === 'object' && fields !== null ? (fields as Record<string, unknown>) : undefined;
  } catch {
    return undefined;
  }
}

function sleepOf({ event, pid, call, seconds, time }: Record<string, unknown>): SkippedSleep | undefined {
  if (event !== 'sleep' || typeof pid !== 'number' || typeof call !== 'string' || typeof seconds !== 'number' || typeof time !== 'number') return undefined;
  return { pid, call, seconds, time };
}

function unrecordedOf({ event, pid, call, count }: Record<string, unknown>): UnrecordedCalls | undefined {
  if (event !== 'unrecorded' || !Number.isSafeInteger(pid) || typeof call !== 'string' || !Number.isSafeInteger(count) || (count as number) < 1) return undefined;
  return { pid: pid as number, call, count: count as number };
}

/** Calls by process and name. */
export type CallCounts = ReadonlyMap<number, ReadonlyMap<string, number>>;

/**
 * The calls the supervisor answered without letting them run, by process and name: those it recorded
 * one by one (which processing also lists among the calls), and those it only counted past its records.
 */
export interface AnsweredCalls {
  recorded: CallCounts;
  counted: CallCounts;
}

export function answeredCalls({ sleeps, unrecorded }: SupervisorRecord): AnsweredCalls {
  return { recorded: countAnswered(sleeps.map(({ pid, call }) => ({ pid, call, count: 1 }))), counted: countAnswered(unrecorded) };
}

function countAnswered(calls: readonly UnrecordedCalls[]): CallCounts {
  const counts = new Map<number, Map<string, number>>();
  for (const { pid, call, count } of calls) {
    if (!ANSWERED_CALLS.has(call)) continue;
    const byName = counts.get(pid) ?? new Map<string, number>();
    byName.set(call, (byName.get(call) ?? 0) + count);
    counts.set(pid, byName);
  }
  return counts;
}

/**
 * The recorded calls the supervisor answered, as events of the behaviour log (`process.sleep`,
 * `shortened`), in time order: processing puts them among the tracer's events, so that they are listed
 * with the process's calls. Calls it let go on are the tracer's to report.
 */
export function answeredCallEvents(sleeps: readonly SkippedSleep[]): BehaviorEvent[] {
  return sleeps
    .filter(({ call }) => ANSWERED_CALLS.has(call))
    .map(({ pid, call, seconds, time }): BehaviorEvent => ({ ts: time, pid, ppid: 0, tid: pid, comm: '', api: call, kind: 'process.sleep', seconds, ret: 0, shortened: true }))
    .sort((a, b) => a.ts - b.ts);
}
