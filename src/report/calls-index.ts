import { once } from 'node:events';
import { mkdirSync, renameSync, rmSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { Worker } from 'node:worker_threads';
import BetterSqlite3 from 'better-sqlite3';
import { behaviorStreams } from './behavior-streams.js';
import type { AnalysisPaths } from '../storage/layout.js';
import { apiOf, callOf } from './calls.js';
import { type EventFold, foldEventLog } from './event-log.js';
import { type BehaviorEvent, EVENTS_FILE } from './events.js';
import type { Call, Report } from './report-types.js';

/**
 * The calls index: every call of a task's behaviour log in one SQLite file beside its reports
 * (`reports/calls.sqlite`), so that the web interface pages through a million calls, filtered by
 * process, name, category or argument text, without reading the log or report.json. report.json keeps
 * only the first calls of each process (processing's limits); the index keeps them all, up to
 * MAX_INDEXED_CALLS. It is written once, to a temporary file renamed into place when complete, so a
 * reader never sees half an index.
 *
 * Calls are numbered in log order (`id`, from 1, without gaps), so an unfiltered page is a range of ids.
 */

/** Bumped when the tables change: an index of another version is built again. */
export const CALLS_INDEX_VERSION = 1;
/** Calls beyond this many are counted, not indexed: a runaway log must not fill the disk twice over. */
export const MAX_INDEXED_CALLS = 5_000_000;

/** A process as the web interface lists it, with how many of its calls the index holds. */
export interface IndexedProcess {
  pid: number;
  ppid: number;
  name: string;
  command_line: string;
  first_seen: number;
  calls: number;
}

/** The processes of the report the index is completed with (report.json's behavior.processes). */
export type ReportedProcess = { pid: number; ppid: number; process_name: string; command_line: string; first_seen: number };

const SCHEMA = `
  CREATE TABLE calls (
    id INTEGER PRIMARY KEY,
    pid INTEGER NOT NULL,
    tid INTEGER NOT NULL,
    time REAL NOT NULL,
    api TEXT NOT NULL,
    category TEXT NOT NULL,
    status INTEGER NOT NULL,
    return_value INTEGER NOT NULL,
    repeated INTEGER NOT NULL,
    arguments TEXT NOT NULL
  );
  CREATE TABLE processes (
    pid INTEGER PRIMARY KEY,
    ppid INTEGER NOT NULL,
    name TEXT NOT NULL,
    command_line TEXT NOT NULL,
    first_seen REAL NOT NULL,
    calls INTEGER NOT NULL
  );
  CREATE TABLE facts (name TEXT PRIMARY KEY, value INTEGER NOT NULL);
`;

/**
 * Writes a calls index. As a fold it takes the calls of the behaviour log in the pipeline's one pass;
 * `add` takes calls from elsewhere (report.json of a task whose log is gone). `complete` gives it the
 * report's processes and puts it in place; `discard` removes what was written.
 */
export class CallsIndexBuilder implements EventFold<void> {
  readonly #temporary: string;
  #db: BetterSqlite3.Database | undefined;
  #insert: BetterSqlite3.Statement | undefined;
  #count = 0;
  #omitted = 0;
  /** Why writing a call failed: the log reader then stops feeding this fold, so the index would be short. */
  #failure: unknown;
  readonly #callsPerPid = new Map<number, number>();

  constructor(
    readonly path: string,
    private readonly limit = MAX_INDEXED_CALLS,
  ) {
    this.#temporary = `${path}.tmp`;
  }

  /** The calls the behaviour section lists: the tracer's own notes and call counts are none. */
  event(event: BehaviorEvent): void {
    if (event.kind.startsWith('tracer.') || apiOf(event) === undefined) return;
    this.add(event.pid, callOf(event));
  }

  add(pid: number, call: Call): void {
    if (this.#count >= this.limit) {
      this.#omitted++;
      return;
    }
    this.#count++;
    this.#callsPerPid.set(pid, (this.#callsPerPid.get(pid) ?? 0) + 1);
    const status = call.status ? 1 : 0;
    const args = JSON.stringify(call.arguments);
    try {
      this.#statement().run(this.#count, pid, call.tid, call.time, call.api, call.category, status, call.return_value, call.repeated, args);
    } catch (error) {
      this.#failure ??= error;
      throw error;
    }
  }

  result(): void {}

  /** Adds the processes, makes the indexes (in a worker thread) and renames the file into place. */
  async complete(processes: readonly ReportedProcess[]): Promise<void> {
    if (this.#failure !== undefined) throw this.#failure;
    const db = this.#open();
    const insert = db.prepare('INSERT OR REPLACE INTO processes (pid, ppid, name, command_line, first_seen, calls) VALUES (?, ?, ?, ?, ?, ?)');
    for (const process of processes) {
      insert.run(process.pid, process.ppid, process.process_name, process.command_line, process.first_seen, this.#callsPerPid.get(process.pid) ?? 0);
    }
    db.prepare('INSERT INTO facts (name, value) VALUES (?, ?), (?, ?)').run('calls', this.#count, 'omitted', this.#omitted);
    db.exec('COMMIT');
    db.close();
    this.#db = undefined;
    await indexInWorker(this.#temporary);
    renameSync(this.#temporary, this.path);
  }

  /** Removes what was written; never throws, so that it can follow any failure. */
  discard(): void {
    try {
      this.#db?.close();
      this.#db = undefined;
      rmSync(this.#temporary, { force: true });
    } catch {
      // Nothing of the index is there to remove (its folder is gone or is no folder).
    }
  }

  #statement(): BetterSqlite3.Statement {
    this.#insert ??= this.#open().prepare(
      'INSERT INTO calls (id, pid, tid, time, api, category, status, return_value, repeated, arguments) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)',
    );
    return this.#insert;
  }

  #open(): BetterSqlite3.Database {
    if (this.#db) return this.#db;
    mkdirSync(dirname(this.#temporary), { recursive: true });
    rmSync(this.#temporary, { force: true });
    const db = new BetterSqlite3(this.#temporary);
    // A file nobody reads until it is renamed into place needs no journal and no syncing on the way.
    db.pragma('journal_mode = OFF');
    db.pragma('synchronous = OFF');
    db.pragma(`user_version = ${CALLS_INDEX_VERSION}`);
    db.exec(SCHEMA);
    db.exec('BEGIN');
    this.#db = db;
    return db;
  }
}

/** Runs calls-index-worker.ts on the file and waits for it: an error there is thrown here. */
async function indexInWorker(path: string): Promise<void> {
  const worker = new Worker(new URL('./calls-index-worker.js', import.meta.url), { workerData: path });
  const [code] = (await once(worker, 'exit')) as [number];
  if (code !== 0) throw new Error(`indexing the calls of ${path} failed (worker exit code ${code})`);
}

/**
 * The index of a reported task that has none (reported before indexes existed, or its index failed):
 * the calls of its behaviour log, or those report.json kept when the log is gone, with report.json's
 * processes.
 */
export async function buildCallsIndex(paths: AnalysisPaths): Promise<void> {
  const report = JSON.parse(await readFile(paths.reportJson, 'utf8')) as Partial<Report>;
  const processes = report.behavior?.processes ?? [];
  const builder = new CallsIndexBuilder(paths.callsIndex);
  try {
    const folded = await foldEventLog(join(paths.dir, EVENTS_FILE), [builder], await behaviorStreams(paths));
    if (folded?.[0] && !folded[0].ok) throw folded[0].error;
    if (!folded) for (const process of processes) for (const call of process.calls ?? []) builder.add(process.pid, call);
    await builder.complete(processes);
  } catch (error) {
    builder.discard();
    throw error;
  }
}
