import type { SampleStart } from '../contracts.js';

/** What the service asks of the records worker (records-worker.ts); one session at a time. */
export type ToRecordsWorker =
  | { type: 'open'; recordsPath: string; eventsPath: string; sample?: SampleStart; windowSeconds: number }
  | { type: 'info'; ts: number; message: string }
  | { type: 'close'; now: number; message?: string };

/** What it answers: `opened` and `closed` in turn, warnings whenever they happen. */
export type FromRecordsWorker =
  | { type: 'opened' }
  | { type: 'closed' }
  | { type: 'warn'; message: string; detail: Record<string, unknown> }
  | { type: 'failed'; message: string };
