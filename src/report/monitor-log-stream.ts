import { type FileHandle, lstat, open, readdir } from 'node:fs/promises';
import { join } from 'node:path';
import type { BehaviorEvent } from './events.js';
import type { EventStream } from './event-streams.js';
import { type MonitorEvent, MonitorLogDecoder } from './monitor-log.js';

/**
 * The behaviour logs of a Windows guest (`logs/<pid>.bson`, one per process Cuckoo's monitor watched, as
 * the result server kept them) as streams of events, one stream per log: the one pass over the behaviour
 * log merges them by time. They are the task's behaviour log (a guest has no `logs/events.jsonl`).
 *
 * A log is a row of BSON documents, each starting with its length. It is read in windows of a bounded
 * size, a document at a time, so a log of gigabytes costs no more memory than its largest document; a
 * document longer than the limit, cut short by the end of the file, or not BSON ends its log there, with
 * an anomaly saying why (Cuckoo stops reading a log at such a document too).
 */

/** Cuckoo's own limit on one document (its MAX_MESSAGE_LENGTH). */
export const MAX_MONITOR_DOCUMENT = 20 << 20;
const WINDOW = 64 << 10;
/** Events handed on per read, so that many logs merged at once stay in bounded memory. */
const BATCH = 512;
const LOG_NAME = /^(\d{1,10})\.bson$/;

export interface MonitorLogOptions {
  maxDocumentBytes?: number;
}

/** A stream per behaviour log of the task folder; none when the task ran on no Windows guest. */
export async function monitorLogStreams(dir: string, options: MonitorLogOptions = {}): Promise<EventStream[]> {
  const logs = join(dir, 'logs');
  const names = await readdir(logs).catch(() => [] as string[]);
  const streams: EventStream[] = [];
  for (const name of names.sort()) {
    const match = LOG_NAME.exec(name);
    if (!match || !(await lstat(join(logs, name))).isFile()) continue;
    streams.push(new MonitorLogStream(join(logs, name), name, Number(match[1]), options.maxDocumentBytes ?? MAX_MONITOR_DOCUMENT));
  }
  return streams;
}

class MonitorLogStream implements EventStream {
  readonly ownLog = true;
  readonly #decoder: MonitorLogDecoder;
  #position = 0;
  #ended = false;
  #lastTime = 0;

  constructor(
    private readonly path: string,
    private readonly name: string,
    private readonly pid: number,
    private readonly maxDocument: number,
  ) {
    this.#decoder = new MonitorLogDecoder(pid);
  }

  async read(): Promise<readonly BehaviorEvent[]> {
    if (this.#ended) return [];
    const events: MonitorEvent[] = [];
    // The file is opened for each batch, so that a task with thousands of logs holds no descriptor idle.
    const file = await open(this.path, 'r').catch(() => undefined);
    if (!file) return this.#end(events, 'the log could not be opened');
    try {
      const size = (await file.stat()).size;
      while (events.length < BATCH && !this.#ended) {
        const window = await this.#window(file, size, BATCH - events.length);
        if (typeof window === 'string') return this.#end(events, window);
        if (window === undefined) return this.#end(events);
        for (const document of window) events.push(...this.#decode(document));
        if (this.#ended) break;
      }
    } finally {
      await file.close();
    }
    for (const event of events) this.#lastTime = Math.max(this.#lastTime, event.ts);
    return events;
  }

  admit(event: BehaviorEvent): BehaviorEvent {
    return event;
  }

  /**
   * The whole documents (at most `most`) of the next window of the file: undefined at a clean end, a reason
   * when the next document is broken.
   */
  async #window(file: FileHandle, size: number, most: number): Promise<Uint8Array[] | string | undefined> {
    if (this.#position >= size) return undefined;
    const first = await readAt(file, this.#position, Math.min(WINDOW, size - this.#position));
    const documents: Uint8Array[] = [];
    let offset = 0;
    while (offset < first.length && documents.length < most) {
      if (first.length - offset < 4) break;
      const length = first.readInt32LE(offset);
      const problem = this.#problemOf(length, size - this.#position - offset);
      if (problem !== undefined) {
        if (documents.length > 0) break;
        return problem;
      }
      if (offset + length > first.length) {
        // Only the first document of a window may be larger than the window: it is read on its own.
        if (documents.length > 0) break;
        documents.push(await readAt(file, this.#position, length));
        offset = length;
        break;
      }
      documents.push(first.subarray(offset, offset + length));
      offset += length;
    }
    if (documents.length === 0) return `a document cut short after ${size - this.#position} bytes`;
    this.#position += offset;
    return documents;
  }

  #problemOf(length: number, remaining: number): string | undefined {
    if (length < 5) return `a document of impossible length ${length}`;
    if (length > this.maxDocument) return `a document of ${length} bytes, more than the ${this.maxDocument} a document may have`;
    if (length > remaining) return `a document of ${length} bytes cut short after ${remaining}`;
    return undefined;
  }

  #decode(document: Uint8Array): MonitorEvent[] {
    try {
      return this.#decoder.document(document);
    } catch (error) {
      this.#ended = true;
      return [this.#note(`a document that is no BSON (${(error as Error).message}): the rest of the log is not read`)];
    }
  }

  /** The log's last events, with what went wrong and what could not be placed said as anomalies. */
  #end(events: MonitorEvent[], problem?: string): MonitorEvent[] {
    this.#ended = true;
    for (const event of events) this.#lastTime = Math.max(this.#lastTime, event.ts);
    if (problem !== undefined) events.push(this.#note(`${problem} at byte ${this.#position}: the rest of the log is not read`));
    const { unnamed, unplaced } = this.#decoder;
    if (unnamed > 0) events.push(this.#note(`${unnamed} calls of an API the monitor had not explained (or not as explained) are not listed`));
    if (unplaced > 0) events.push(this.#note(`${unplaced} calls before the process's own message are not listed`));
    return events;
  }

  #note(message: string): MonitorEvent {
    const process = this.#decoder.process;
    return {
      kind: 'win.anomaly',
      ts: this.#lastTime || (process?.firstSeen ?? 0),
      pid: process?.pid ?? this.pid,
      ppid: process?.ppid ?? 0,
      tid: 0,
      comm: process?.name ?? '',
      category: 'log',
      funcname: this.name,
      message: `the behaviour log ${this.name}: ${message}`,
    };
  }
}

async function readAt(file: FileHandle, position: number, length: number): Promise<Buffer> {
  const buffer = Buffer.alloc(length);
  const { bytesRead } = await file.read(buffer, 0, length, position);
  return buffer.subarray(0, bytesRead);
}
