import { createReadStream } from 'node:fs';
import type { BehaviorEvent } from './events.js';
import { BufferedStream, type EventStream } from './event-streams.js';

/**
 * The one reading of a task's behaviour log (`logs/events.jsonl`). Every consumer is a fold: it is given
 * each event in log order, keeps what it needs in bounded memory, and gives its result at the end. The
 * log is read and each line parsed once however many folds there are, so a million events cost one pass.
 */
export interface EventFold<R> {
  /** A line holding an event: an object with a string `kind` and an integer `pid`. */
  event(event: BehaviorEvent): void;
  /** A non-blank line that is not an event (garbage, a line torn by a crash). */
  malformed?(): void;
  result(): R;
}

/**
 * Where each event the reader hands out stands among the events of its process (Cuckoo's call index,
 * `cid`). Kept on the event under a symbol: cheaper than a side table for millions of events, and left out
 * by JSON. Code that copies an event's fields with a rest spread must leave it out by name.
 */
export const CALL_INDEX = Symbol('call index');

export type Indexed<E extends BehaviorEvent = BehaviorEvent> = E & { [CALL_INDEX]?: number };

export function callIndexOf(event: BehaviorEvent): number | undefined {
  return (event as Indexed)[CALL_INDEX];
}

/** What became of one fold: its result, or the error it threw (it was fed nothing after that). */
export type FoldOutcome<R> = { ok: true; value: R } | { ok: false; error: unknown };

/**
 * Feeds every fold from one streaming read of the log. Undefined when there is no log (and no stream is a
 * log of its own, as a Windows guest's monitor logs are). A fold that throws
 * is dropped and its error returned in its place; the others go on. `among` are streams of events from
 * elsewhere (the calls the sample supervisor answered, which no tracer saw; Windows calls Wine traced),
 * each in time order: their events are fed before the first log event that is later, as each stream
 * admits them.
 */
export async function foldEventLog(
  path: string,
  folds: ReadonlyArray<EventFold<unknown>>,
  among: readonly EventStream[] = [],
): Promise<Array<FoldOutcome<unknown>> | undefined> {
  const feeder = new Feeder(folds);
  const streams = among.map((stream) => new BufferedStream(stream));
  const feedLogEvent = (event: BehaviorEvent) => {
    for (const buffered of streams) buffered.stream.observe?.(event);
    feeder.event(event);
  };
  const feed = (line: string): Promise<void> | undefined => {
    const event = parseEvent(line);
    if (event === null) feeder.malformed();
    if (!event) return undefined;
    const empty = feeder.feedAmong(streams, event.ts);
    if (empty !== undefined) return feeder.feedAllAmong(streams, event.ts, empty).then(() => feedLogEvent(event));
    feedLogEvent(event);
    return undefined;
  };
  const logRead = await readLines(path, feed);
  if (!logRead && !among.some((stream) => stream.ownLog)) return undefined;
  await feeder.feedAllAmong(streams, Infinity);
  return folds.map((fold) => {
    if (feeder.failures.has(fold)) return { ok: false, error: feeder.failures.get(fold) };
    try {
      return { ok: true, value: fold.result() };
    } catch (error) {
      return { ok: false, error };
    }
  });
}

/** Hands each event (each line parsed once) to every fold still going. */
class Feeder {
  readonly failures = new Map<EventFold<unknown>, unknown>();
  #live: Array<EventFold<unknown>>;
  readonly #eventsPerPid = new Map<number, number>();
  readonly #forked = new Set<number>();

  constructor(folds: ReadonlyArray<EventFold<unknown>>) {
    this.#live = [...folds];
  }

  malformed(): void {
    for (const fold of this.#live) this.#guard(fold, () => fold.malformed?.());
  }

  readonly known = (pid: number) => this.#eventsPerPid.has(pid) || this.#forked.has(pid);

  /**
   * Feeds the streams' events earlier than `before`, earliest first, as their streams admit them. Returns
   * a stream whose batch ran out before that (to be refilled), else undefined once all are fed.
   */
  feedAmong(streams: readonly BufferedStream[], before: number): BufferedStream | undefined {
    for (;;) {
      let earliest: BufferedStream | undefined;
      for (const buffered of streams) {
        if (buffered.empty) return buffered;
        const head = buffered.head;
        if (head !== undefined && head.ts < before && (earliest === undefined || head.ts < earliest.head!.ts)) earliest = buffered;
      }
      if (earliest === undefined) return undefined;
      const event = earliest.stream.admit(earliest.take(), this.known);
      if (event !== undefined) this.event(event);
    }
  }

  /** feedAmong, refilling streams as they run out. */
  async feedAllAmong(streams: readonly BufferedStream[], before: number, empty?: BufferedStream): Promise<void> {
    for (let next = empty ?? this.feedAmong(streams, before); next !== undefined; next = this.feedAmong(streams, before)) await next.refill();
  }

  event(event: BehaviorEvent): void {
    if (event.kind === 'process.fork') this.#forked.add(event.child);
    const index = this.#eventsPerPid.get(event.pid) ?? 0;
    this.#eventsPerPid.set(event.pid, index + 1);
    (event as Indexed)[CALL_INDEX] = index;
    const live = this.#live;
    for (let i = 0; i < live.length; i++) {
      const fold = live[i]!;
      try {
        fold.event(event);
      } catch (error) {
        this.#drop(fold, error);
      }
    }
  }

  #guard(fold: EventFold<unknown>, call: () => void): void {
    try {
      call();
    } catch (error) {
      this.#drop(fold, error);
    }
  }

  #drop(fold: EventFold<unknown>, error: unknown): void {
    this.failures.set(fold, error);
    this.#live = this.#live.filter((other) => other !== fold);
  }
}

/** One fold over the log: its result, undefined without a log; a fold's error is thrown. */
export async function foldOne<R>(path: string, fold: EventFold<R>, among: readonly EventStream[] = []): Promise<R | undefined> {
  const [outcome] = (await foldEventLog(path, [fold], among)) ?? [];
  if (!outcome) return undefined;
  if (!outcome.ok) throw outcome.error;
  return outcome.value as R;
}

/** The event of a line; null when the line is not one, undefined when it is blank. */
export function parseEvent(line: string): BehaviorEvent | null | undefined {
  // Event lines start with "{"; only other lines can be blank.
  if (line.charCodeAt(0) !== 0x7b && line.trim() === '') return undefined;
  try {
    const event = JSON.parse(line) as { kind?: unknown; pid?: unknown } | null;
    return typeof event?.kind === 'string' && Number.isInteger(event.pid) ? (event as BehaviorEvent) : null;
  } catch {
    return null;
  }
}

/** A line longer than this is no event the tracer wrote; it is skipped rather than held in memory. */
const MAX_LINE = 8 << 20;
/** What an overlong line is handed on as: a line that does not parse. */
const NOT_JSON = '\u0000';

/**
 * Calls `onLine` for each line of a file, read in 1 MiB chunks (cheaper than readline for millions of
 * short lines), waiting for it when it returns a promise. An overlong line counts as one unreadable line.
 * False when the file does not exist.
 */
async function readLines(path: string, onLine: (line: string) => Promise<void> | undefined): Promise<boolean> {
  const stream = createReadStream(path, { encoding: 'utf8', highWaterMark: 1 << 20 });
  let rest = '';
  let overlong = false;
  const finish = (tail: string) => {
    const line = overlong ? NOT_JSON : stripCr(rest + tail);
    rest = '';
    overlong = false;
    return onLine(line);
  };
  try {
    for await (const chunk of stream as AsyncIterable<string>) {
      let start = 0;
      for (let end = chunk.indexOf('\n'); end >= 0; end = chunk.indexOf('\n', start)) {
        const pending = rest === '' && !overlong ? onLine(stripCr(chunk.slice(start, end))) : finish(chunk.slice(start, end));
        start = end + 1;
        if (pending) await pending;
      }
      if (overlong) continue;
      rest += chunk.slice(start);
      if (rest.length > MAX_LINE) {
        rest = '';
        overlong = true;
      }
    }
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return false;
    throw error;
  }
  if (rest !== '' || overlong) await finish('');
  return true;
}

function stripCr(line: string): string {
  return line.endsWith('\r') ? line.slice(0, -1) : line;
}
