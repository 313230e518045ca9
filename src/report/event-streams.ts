import type { BehaviorEvent } from './events.js';

/**
 * Events from elsewhere than the behaviour log, put among the log's events by time in the one pass over
 * it: the calls the sample supervisor answered itself, the Windows calls Wine traced. Read in batches,
 * so a stream of a million events stays in bounded memory.
 */
export interface EventStream {
  /** The next events, in time order; an empty batch at the end. */
  read(): Promise<readonly BehaviorEvent[]>;
  /** Sees each event of the log as it is fed, before the stream's later events: to learn the log's ids. */
  observe?(event: BehaviorEvent): void;
  /**
   * The event as it is to be fed, just before it is (undefined leaves it out). `known` tells whether the
   * log has shown a process (an event of it, or its creation).
   */
  admit(event: BehaviorEvent, known: (pid: number) => boolean): BehaviorEvent | undefined;
  /**
   * The stream is a behaviour log of its own (a Windows guest's monitor logs): its events are read even
   * when the task has no `logs/events.jsonl`.
   */
  readonly ownLog?: boolean;
}

/** Events already in memory and in time order, fed only for processes the log has shown. */
export function eventsOfKnownProcesses(events: readonly BehaviorEvent[]): EventStream {
  let done = false;
  return {
    async read() {
      if (done) return [];
      done = true;
      return events;
    },
    admit: (event, known) => (known(event.pid) ? event : undefined),
  };
}

/** A stream with its next batch at hand, so that the merge can look at its earliest event. */
export class BufferedStream {
  #batch: readonly BehaviorEvent[] = [];
  #next = 0;
  #ended = false;

  constructor(readonly stream: EventStream) {}

  /** Whether the batch is used up and the stream may have more: then `refill()` before looking. */
  get empty(): boolean {
    return this.#next >= this.#batch.length && !this.#ended;
  }

  get head(): BehaviorEvent | undefined {
    return this.#batch[this.#next];
  }

  take(): BehaviorEvent {
    return this.#batch[this.#next++]!;
  }

  async refill(): Promise<void> {
    this.#batch = await this.stream.read();
    this.#next = 0;
    if (this.#batch.length === 0) this.#ended = true;
  }
}
