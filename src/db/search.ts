import { type Kysely, type RawBuilder, SqliteAdapter, sql } from 'kysely';
import type { SearchDocument } from '../report/search-entries.js';
import type { SearchField } from '../report/search-fields.js';
import { nowIso } from '../util/time.js';
import type { Database } from './schema.js';
import { normOf, prepareQuery, type PreparedQuery, termsOf } from './search-text.js';
import type { Db } from './tasks.js';

export interface SearchQuery {
  text: string;
  field?: SearchField;
  limit: number;
  offset: number;
}

/** How a value matched: the whole value, its start, or words in it. */
export type MatchKind = 'exact' | 'prefix' | 'words';

export interface SearchMatch {
  field: string;
  value: string;
  kind: MatchKind;
}

export interface SearchResult {
  id: number;
  target: string;
  score: number;
  category: string;
  added_on: string;
  matches: SearchMatch[];
}

export interface SearchPage {
  results: SearchResult[];
  /** Analyses that match, over all pages. */
  total: number;
}

/** Matches listed per result, best first. */
const MAX_MATCHES = 10;
/** Entries per INSERT: SQLite allows 32766 parameters a statement. */
const INSERT_CHUNK = 500;
const KIND_OF_TIER: Record<number, MatchKind> = { 3: 'exact', 2: 'prefix', 1: 'words' };

/**
 * The search index over reported analyses (migration 0004). A task's entries are replaced whenever its
 * report is written and go when the task is deleted (ON DELETE CASCADE). A query matches a value
 * exactly, by its start, or by its words (the last word as a prefix); analyses are ranked by their
 * best match (exact, then prefix, then words), then by how many values matched, newest first.
 */
export class SearchStore {
  readonly #sqlite: boolean;

  constructor(private readonly db: Kysely<Database>) {
    this.#sqlite = db.getExecutor().adapter instanceof SqliteAdapter;
  }

  /** Makes `document` the task's whole entry in the index, in one transaction. */
  async replace(taskId: number, document: SearchDocument, db?: Db): Promise<void> {
    if (db === undefined) return this.db.transaction().execute((trx) => this.replace(taskId, document, trx));
    await db.deleteFrom('search_tasks').where('task_id', '=', taskId).execute();
    await this.add(taskId, document, db);
  }

  /**
   * Indexes `document` unless the task is indexed already (then false, and nothing changes): for
   * indexing old reports while new ones may be written.
   */
  async add(taskId: number, document: SearchDocument, db?: Db): Promise<boolean> {
    if (db === undefined) return this.db.transaction().execute((trx) => this.add(taskId, document, trx));
    const added = await db
      .insertInto('search_tasks')
      .values({ task_id: taskId, target: document.target, score: document.score, indexed_on: nowIso() })
      .onConflict((oc) => oc.column('task_id').doNothing())
      .returning('task_id')
      .executeTakeFirst();
    if (added === undefined) return false;
    const rows = document.entries.map(({ field, value }) => ({ task_id: taskId, field, value, norm: normOf(value), terms: termsOf(value) }));
    for (let start = 0; start < rows.length; start += INSERT_CHUNK) {
      await db.insertInto('search_entries').values(rows.slice(start, start + INSERT_CHUNK)).execute();
    }
    return true;
  }

  /** Reported tasks the index does not hold yet (reported before it existed), by id from `afterId`. */
  async unindexedReported(afterId: number, limit: number): Promise<number[]> {
    const rows = await this.db
      .selectFrom('tasks')
      .leftJoin('search_tasks', 'search_tasks.task_id', 'tasks.id')
      .select('tasks.id')
      .where('tasks.status', '=', 'reported')
      .where('search_tasks.task_id', 'is', null)
      .where('tasks.id', '>', afterId)
      .orderBy('tasks.id')
      .limit(limit)
      .execute();
    return rows.map((row) => row.id);
  }

  async search(query: SearchQuery): Promise<SearchPage> {
    const prepared = prepareQuery(query.text);
    const ranked = await sql<{ task_id: number; total: number | string }>`
      WITH hits AS (${this.#hits(prepared, query.field)})
      SELECT task_id, max(tier) AS best, count(*) AS n, count(*) OVER () AS total FROM hits GROUP BY task_id
      ORDER BY best DESC, n DESC, task_id DESC LIMIT ${query.limit} OFFSET ${query.offset}`.execute(this.db);
    const ids = ranked.rows.map((row) => Number(row.task_id));
    const total = ranked.rows[0] !== undefined ? Number(ranked.rows[0].total) : await this.#count(prepared, query.field);
    if (ids.length === 0) return { results: [], total };
    const [matches, tasks] = await Promise.all([this.#matchesOf(prepared, query.field, ids), this.#tasksOf(ids)]);
    const results = ids.flatMap((id) => {
      const task = tasks.get(id);
      return task ? [{ ...task, matches: matches.get(id) ?? [] }] : [];
    });
    return { results, total };
  }

  async #count(prepared: PreparedQuery, field: SearchField | undefined): Promise<number> {
    const { rows } = await sql<{ total: number | string }>`
      WITH hits AS (${this.#hits(prepared, field)}) SELECT count(DISTINCT task_id) AS total FROM hits`.execute(this.db);
    return Number(rows[0]?.total ?? 0);
  }

  async #matchesOf(prepared: PreparedQuery, field: SearchField | undefined, ids: number[]): Promise<Map<number, SearchMatch[]>> {
    const { rows } = await sql<{ task_id: number; field: string; value: string; tier: number }>`
      WITH hits AS (${this.#hits(prepared, field, ids)})
      SELECT task_id, field, value, tier FROM hits ORDER BY tier DESC, field, value`.execute(this.db);
    const matches = new Map<number, SearchMatch[]>();
    for (const row of rows) {
      const id = Number(row.task_id);
      const list = matches.get(id) ?? [];
      if (list.length < MAX_MATCHES) list.push({ field: row.field, value: row.value, kind: KIND_OF_TIER[Number(row.tier)] ?? 'words' });
      matches.set(id, list);
    }
    return matches;
  }

  async #tasksOf(ids: number[]): Promise<Map<number, Omit<SearchResult, 'matches'>>> {
    const rows = await this.db
      .selectFrom('tasks')
      .innerJoin('search_tasks', 'search_tasks.task_id', 'tasks.id')
      .select(['tasks.id', 'search_tasks.target', 'search_tasks.score', 'tasks.category', 'tasks.added_on'])
      .where('tasks.id', 'in', ids)
      .execute();
    return new Map(rows.map((row) => [row.id, { ...row, score: Number(row.score) }]));
  }

  /** Every matching entry with its tier (3 exact, 2 prefix, 1 words), optionally of some tasks only. */
  #hits(prepared: PreparedQuery, field: SearchField | undefined, ids?: number[]): RawBuilder<unknown> {
    const { norm, upper } = prepared;
    const prefix = upper === undefined ? sql`FALSE` : sql`e.norm >= ${norm} AND e.norm < ${upper}`;
    const onlyField = field === undefined ? sql`` : sql`AND e.field = ${field}`;
    const onlyTasks = ids === undefined ? sql`` : sql`AND e.task_id IN (${sql.join(ids)})`;
    return sql`SELECT e.task_id, e.field, e.value, CASE WHEN e.norm = ${norm} THEN 3 WHEN ${prefix} THEN 2 ELSE 1 END AS tier
      FROM search_entries e WHERE e.id IN (${this.#candidates(prepared)}) ${onlyField} ${onlyTasks}`;
  }

  /** Ids of the entries that match, from the indexes: the B-tree on norm and the full-text index. */
  #candidates({ norm, upper, words, lastIsPrefix }: PreparedQuery): RawBuilder<unknown> {
    const byNorm =
      upper === undefined
        ? sql`SELECT id FROM search_entries WHERE norm = ${norm}`
        : sql`SELECT id FROM search_entries WHERE norm >= ${norm} AND norm < ${upper}`;
    if (words.length === 0) return byNorm;
    if (this.#sqlite) {
      const match = words.map((word) => `"${word}"`).join(' ') + (lastIsPrefix ? '*' : '');
      return sql`${byNorm} UNION SELECT rowid FROM search_terms WHERE search_terms MATCH ${match}`;
    }
    const tsquery = words.map((word, index) => (index === words.length - 1 && lastIsPrefix ? `${word}:*` : word)).join(' & ');
    return sql`${byNorm} UNION SELECT id FROM search_entries WHERE terms_vector @@ to_tsquery('simple', ${tsquery})`;
  }
}
