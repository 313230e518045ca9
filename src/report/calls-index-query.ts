import { existsSync } from 'node:fs';
import BetterSqlite3 from 'better-sqlite3';
import { CALLS_INDEX_VERSION, type IndexedProcess } from './calls-index.js';
import type { Call } from './report-types.js';

/** Which calls to list: every filter given must hold; `text` is looked for in the arguments, ignoring ASCII case. */
export interface CallsQuery {
  pid?: number;
  /** Any of these system call names. */
  apis?: readonly string[];
  category?: string;
  text?: string;
  offset: number;
  limit: number;
}

/** A call as the web interface lists it. */
export interface ListedCall {
  pid: number;
  tid: number;
  time: number;
  api: string;
  category: Call['category'];
  arguments: Record<string, unknown>;
  return: number;
  status: boolean;
  repeated?: number;
}

interface CallRow {
  pid: number;
  tid: number;
  time: number;
  api: string;
  category: Call['category'];
  status: number;
  return_value: number;
  repeated: number;
  arguments: string;
}

const CALL_COLUMNS = 'pid, tid, time, api, category, status, return_value, repeated, arguments';

/** A complete calls index (report/calls-index.ts), opened read-only for the web interface's queries. */
export class CallsIndex {
  private constructor(private readonly db: BetterSqlite3.Database) {}

  /** The index at `path`; undefined when there is none of this version (it is then to be built). */
  static open(path: string): CallsIndex | undefined {
    if (!existsSync(path)) return undefined;
    const db = new BetterSqlite3(path, { readonly: true, fileMustExist: true });
    if (db.pragma('user_version', { simple: true }) !== CALLS_INDEX_VERSION) {
      db.close();
      return undefined;
    }
    return new CallsIndex(db);
  }

  /** The processes by first appearance, and how many calls were left out of the index. */
  processes(): { processes: IndexedProcess[]; omitted: number } {
    const processes = this.db.prepare('SELECT pid, ppid, name, command_line, first_seen, calls FROM processes ORDER BY first_seen, pid').all() as IndexedProcess[];
    return { processes, omitted: this.#fact('omitted') };
  }

  /** One page of the calls that match, in log order, and how many match in all. */
  calls(query: CallsQuery): { calls: ListedCall[]; total: number } {
    const { clauses, values } = conditions(query);
    if (clauses.length === 0) {
      // Calls are numbered from 1 without gaps: the page is a range of ids, however deep.
      const rows = this.db.prepare(`SELECT ${CALL_COLUMNS} FROM calls WHERE id > ? ORDER BY id LIMIT ?`).all(query.offset, query.limit) as CallRow[];
      return { calls: rows.map(listed), total: this.#fact('calls') };
    }
    const where = `WHERE ${clauses.join(' AND ')}`;
    if (query.text) return this.#scan(where, values, query);
    const rows = this.db.prepare(`SELECT ${CALL_COLUMNS} FROM calls ${where} ORDER BY id LIMIT ? OFFSET ?`).all(...values, query.limit, query.offset) as CallRow[];
    const { total } = this.db.prepare(`SELECT count(*) AS total FROM calls ${where}`).get(...values) as { total: number };
    return { calls: rows.map(listed), total };
  }

  /**
   * A search in the arguments reads every call the other filters leave (no index serves it): one pass
   * counts the matches and notes the page's ids, rather than one pass for the page and another to count.
   */
  #scan(where: string, values: Array<string | number>, query: CallsQuery): { calls: ListedCall[]; total: number } {
    const ids: number[] = [];
    let total = 0;
    for (const id of this.db.prepare(`SELECT id FROM calls ${where} ORDER BY id`).pluck().iterate(...values) as Iterable<number>) {
      if (total >= query.offset && ids.length < query.limit) ids.push(id);
      total++;
    }
    if (ids.length === 0) return { calls: [], total };
    const rows = this.db.prepare(`SELECT ${CALL_COLUMNS} FROM calls WHERE id IN (${ids.map(() => '?').join(', ')}) ORDER BY id`).all(...ids) as CallRow[];
    return { calls: rows.map(listed), total };
  }

  close(): void {
    this.db.close();
  }

  #fact(name: string): number {
    const row = this.db.prepare('SELECT value FROM facts WHERE name = ?').get(name) as { value: number } | undefined;
    return row?.value ?? 0;
  }
}

function conditions(query: CallsQuery): { clauses: string[]; values: Array<string | number> } {
  const clauses: string[] = [];
  const values: Array<string | number> = [];
  if (query.pid !== undefined) {
    clauses.push('pid = ?');
    values.push(query.pid);
  }
  if (query.apis && query.apis.length > 0) {
    clauses.push(`api IN (${query.apis.map(() => '?').join(', ')})`);
    values.push(...query.apis);
  }
  if (query.category !== undefined) {
    clauses.push('category = ?');
    values.push(query.category);
  }
  if (query.text !== undefined && query.text !== '') {
    clauses.push(`arguments LIKE ? ESCAPE '\\'`);
    values.push(`%${likeLiteral(jsonText(query.text))}%`);
  }
  return { clauses, values };
}

/** Text as it appears inside the arguments' JSON (quotes, backslashes and control characters escaped). */
function jsonText(text: string): string {
  return JSON.stringify(text).slice(1, -1);
}

/** Text matched literally by LIKE: its wildcards and the escape character itself escaped. */
function likeLiteral(text: string): string {
  return text.replace(/[\\%_]/g, (char) => `\\${char}`);
}

function listed(row: CallRow): ListedCall {
  const args = JSON.parse(row.arguments) as Record<string, unknown>;
  const { pid, tid, time, api, category, return_value, repeated } = row;
  return listedCall(pid, { tid, time, api, category, arguments: args, return_value, status: row.status === 1, repeated });
}

/** A call of the report (report/calls.ts's callOf) as the web interface lists it: `repeated` only when it is. */
export function listedCall(pid: number, call: Call): ListedCall {
  const listed: ListedCall = {
    pid,
    tid: call.tid,
    time: call.time,
    api: call.api,
    category: call.category,
    arguments: call.arguments,
    return: call.return_value,
    status: call.status,
  };
  if (call.repeated > 0) listed.repeated = call.repeated;
  return listed;
}
