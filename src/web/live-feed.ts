import { join } from 'node:path';
import type { AppContext } from '../app.js';
import { apiOf, callOf } from '../report/calls.js';
import { type ListedCall, listedCall } from '../report/calls-index-query.js';
import type { IndexedProcess } from '../report/calls-index.js';
import { parseEvent } from '../report/event-log.js';
import { EVENTS_FILE } from '../report/events.js';
import { LiveProcesses } from './live-processes.js';
import { LogTail } from './log-tail.js';

/** How often the stream looks for new events and state changes. */
export const LIVE_TICK_MS = 200;
/** Calls sent per tick at most: a busy sample's others are counted (`skipped`), not sent. */
export const MAX_CALLS_PER_BATCH = 200;
/** Log read per tick at most: a faster writer makes the stream fall behind rather than hog the server. */
const MAX_BYTES_PER_TICK = 1 << 20;
/** Log read at most once the run is over, before `end`. */
const FINAL_BYTES = 16 << 20;
/** States after which nothing more happens to a task's run (as the command line's `wait` knows them). */
const FINAL_STATES = new Set(['reported', 'failed_analysis', 'failed_processing', 'failed_reporting', 'recovered']);

/** What the live stream sends: `process` (a row), `calls` (an array), `skipped` ({calls}), `state` ({state}), `end` ({state}). */
export type LiveSend = (event: 'process' | 'calls' | 'skipped' | 'state' | 'end', data: unknown) => void;

/**
 * One client's view of a task as it runs: its state, and the sample's processes and calls as the tracer
 * appends them to the task's behaviour log. The log holds only the sample's processes, with paths as
 * the sample saw them (the tracer's scope, machinery/host/tracer/sample-scope.ts); the tracer's own notes
 * are left out here, as in the report.
 */
export class LiveFeed {
  readonly #processes = new LiveProcesses();
  readonly #tail: LogTail;
  #state: string | null | undefined;
  #token: string | undefined;

  constructor(
    private readonly ctx: AppContext,
    private readonly taskId: number,
    private readonly send: LiveSend,
  ) {
    this.#tail = new LogTail(join(ctx.layout.analysis(taskId).dir, EVENTS_FILE));
  }

  /** Sends what changed since the last step; false once `end` was sent. */
  async step(): Promise<boolean> {
    const previous = this.#state;
    const state = await this.#currentState();
    if (state !== previous) {
      this.#state = state;
      this.send('state', { state });
    }
    const over = state === null || FINAL_STATES.has(state);
    // The log was complete before the task left `running`: a run this stream watched is read to its end
    // (within bounds) before `end`. A task that was over before the stream began ends it at once.
    if (over && previous !== undefined && previous !== 'pending') await this.#newEvents(FINAL_BYTES);
    else if (!over && state !== 'pending') await this.#newEvents(MAX_BYTES_PER_TICK);
    if (over) this.send('end', { state });
    return !over;
  }

  /** The task's state, read again only when the database may have changed; null once the task is gone. */
  async #currentState(): Promise<string | null> {
    const token = this.ctx.dataChangeToken();
    if (this.#state !== undefined && token !== undefined && token === this.#token) return this.#state;
    this.#token = token;
    return (await this.ctx.stores.tasks.get(this.taskId))?.status ?? null;
  }

  async #newEvents(maxBytes: number): Promise<void> {
    const changed = new Set<IndexedProcess>();
    const calls: ListedCall[] = [];
    let skipped = 0;
    for (const line of await this.#tail.read(maxBytes)) {
      // Once the batch is full, a call of a known process is only counted: its line is not even parsed.
      const pid = headerPid(line);
      if (calls.length >= MAX_CALLS_PER_BATCH && pid !== undefined && this.#processes.has(pid) && !line.includes('"kind":"process.')) {
        this.#processes.count(pid);
        skipped++;
        continue;
      }
      const event = parseEvent(line);
      if (!event) continue;
      const api = event.kind.startsWith('tracer.') ? undefined : apiOf(event);
      for (const process of this.#processes.observe(event, api !== undefined)) changed.add(process);
      if (api === undefined || !this.#processes.has(event.pid)) continue;
      if (calls.length < MAX_CALLS_PER_BATCH) calls.push(listedCall(event.pid, callOf(event)));
      else skipped++;
    }
    for (const process of changed) this.send('process', process);
    if (calls.length > 0) this.send('calls', calls);
    if (skipped > 0) this.send('skipped', { calls: skipped });
  }
}

/** The pid of an event line as the tracer writes it (`{"ts":…,"pid":N,…`); undefined for any other line. */
function headerPid(line: string): number | undefined {
  const match = /^\{"ts":[^,]*,"pid":(\d+),/.exec(line);
  return match ? Number(match[1]) : undefined;
}
