import { Worker } from 'node:worker_threads';
import type { Logger } from 'pino';
import { unavailable } from '../../../errors.js';
import type { SampleStart } from '../contracts.js';
import type { FromRecordsWorker, ToRecordsWorker } from './records-messages.js';

export interface DecodingSession {
  /** The file the monitor writes the session's records to. */
  recordsPath: string;
  /** The analysis's events file. */
  eventsPath: string;
  sample?: SampleStart;
  windowSeconds: number;
}

/**
 * The thread that decodes the monitor's records (records-worker.ts), kept for the monitor's whole life:
 * starting a thread per analysis would cost each task its start-up. One session at a time, like the
 * monitor itself.
 */
export class RecordsDecoding {
  private readonly waiting: Array<{ expect: 'opened' | 'closed'; resolve: () => void; reject: (error: Error) => void }> = [];
  private exited: Error | null = null;

  private constructor(
    private readonly worker: Worker,
    private readonly log: Logger,
  ) {
    worker.on('message', (message: FromRecordsWorker) => this.receive(message));
    worker.on('error', (error) => this.fail(error));
    worker.on('exit', (code) => this.fail(new Error(`the records worker exited with code ${code}`)));
    // An idle monitor must not keep the service (or a test) from exiting; a session's own promises do.
    worker.unref();
  }

  static start(log: Logger): RecordsDecoding {
    return new RecordsDecoding(new Worker(new URL('./records-worker.js', import.meta.url)), log);
  }

  /** Starts following the session's records file into its events file. */
  open(session: DecodingSession): Promise<void> {
    return this.ask({ type: 'open', ...session }, 'opened');
  }

  /** A note from the tracer itself, written into the events file at once. */
  info(ts: number, message: string): void {
    this.worker.postMessage({ type: 'info', ts, message } satisfies ToRecordsWorker);
  }

  /** Reads the records file to its end (the monitor has closed it), decodes what is held and completes the events file. */
  close(now: number, message?: string): Promise<void> {
    return this.ask({ type: 'close', now, message }, 'closed');
  }

  async terminate(): Promise<void> {
    await this.worker.terminate();
  }

  private ask(message: ToRecordsWorker, expect: 'opened' | 'closed'): Promise<void> {
    if (this.exited) return Promise.reject(this.exited);
    // While an answer is awaited, the thread keeps the process alive: nothing else may.
    this.worker.ref();
    return new Promise((resolve, reject) => {
      this.waiting.push({ expect, resolve, reject });
      this.worker.postMessage(message);
    });
  }

  private receive(message: FromRecordsWorker): void {
    if (message.type === 'warn') {
      this.log.warn(message.detail, message.message);
      return;
    }
    const next = this.waiting.shift();
    if (this.waiting.length === 0) this.worker.unref();
    if (!next) return;
    if (message.type === 'failed') next.reject(unavailable(`decoding the monitor's records failed: ${message.message}`));
    else if (message.type !== next.expect) next.reject(unavailable(`the records worker answered ${message.type}, not ${next.expect}`));
    else next.resolve();
  }

  private fail(error: Error): void {
    this.exited ??= error;
    for (const pending of this.waiting.splice(0)) pending.reject(error);
  }
}
