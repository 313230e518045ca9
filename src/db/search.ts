import { type Kysely, type RawBuilder, SqliteAdapter, sql } from 'kysely';
import type { SearchDocument } from '../report/search-entries.js';
import { SEARCH_FIELDS, type SearchField } from '../report/search-fields.js';
import { nowIso } from '../util/time.js';
import type { Database } from './schema.js';
import { type MatchKind, matchOf, normOf, prepareQuery, type PreparedQuery, termsOf } from './search-text.js';
import type { Db } from './tasks.js';

export interface SearchQuery {
  text: string;
  field?: SearchField;
  limit: number;
  offset: number;
}

export type { MatchKind } from './search-text.js';

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
/** Rows per INSERT: SQLite allows 32766 parameters a statement. */
const INSERT_CHUNK = 500;
/** search_words ids: task_id * FIELD_SLOTS + the field's position in SEARCH_FIELDS. */
const FIELD_SLOTS = 32;
const MATCH_ORDER: Record<MatchKind | 'some-words', number> = { exact: 0, prefix: 1, words: 2, 'some-words': 3 };

/**
 * The search index over reported analyses (migration 0005-search-index). A task's entries are replaced whenever its
 * report is written and go when the task is deleted (ON DELETE CASCADE). A query matches a value
 * exactly or by its start (the B-tree on norm), or a field of a task by words (the full-text index;
 * the last word as a prefix). Analyses are ranked by their best match (exact, then prefix, then words),
 * then by how many values and fields matched, newest first; each lists the values that matched.
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
    const entries = document.entries.map(({ field, value }) => ({ task_id: taskId, field, value, norm: normOf(value) }));
    for (let start = 0; start < entries.length; start += INSERT_CHUNK) {
      await db.insertInto('search_entries').values(entries.slice(start, start + INSERT_CHUNK)).execute();
    }
    const words = SEARCH_FIELDS.flatMap((field, position) => {
      const terms = termsOf(document.entries.filter((entry) => entry.field === field).map((entry) => entry.value));
      return terms === '' ? [] : [{ id: taskId * FIELD_SLOTS + position, task_id: taskId, terms }];
    });
    if (words.length > 0) await db.insertInto('search_words').values(words).execute();
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
    const { rows } = await sql<Omit<SearchResult, 'matches'> & { total: number | string }>`
      WITH hits AS (${this.#hits(prepared, query.field)}),
      ranked AS (SELECT task_id, max(best) AS best, sum(n) AS n, count(*) OVER () AS total FROM hits GROUP BY task_id
        ORDER BY best DESC, n DESC, task_id DESC LIMIT ${query.limit} OFFSET ${query.offset})
      SELECT t.id, s.target, s.score, t.category, t.added_on, r.total
      FROM ranked r JOIN search_tasks s ON s.task_id = r.task_id JOIN tasks t ON t.id = r.task_id
      ORDER BY r.best DESC, r.n DESC, r.task_id DESC`.execute(this.db);
    const total = rows[0] !== undefined ? Number(rows[0].total) : await this.#count(prepared, query.field);
    if (rows.length === 0) return { results: [], total };
    const matches = await this.#matchesOf(prepared, query.field, rows.map((row) => Number(row.id)));
    const results = rows.map(({ total: _total, ...task }) => ({ ...task, id: Number(task.id), score: Number(task.score), matches: matches.get(Number(task.id)) ?? [] }));
    return { results, total };
  }

  async #count(prepared: PreparedQuery, field: SearchField | undefined): Promise<number> {
    const { rows } = await sql<{ total: number | string }>`
      WITH hits AS (${this.#hits(prepared, field)}) SELECT count(DISTINCT task_id) AS total FROM hits`.execute(this.db);
    return Number(rows[0]?.total ?? 0);
  }

  /**
   * Per task, the values that matched, best first: read back from the task's entries and matched as the
   * indexes match (search-text.ts). A field matched by words spread over several values lists those
   * that hold some of them.
   */
  async #matchesOf(prepared: PreparedQuery, field: SearchField | undefined, ids: number[]): Promise<Map<number, SearchMatch[]>> {
    let query = this.db.selectFrom('search_entries').select(['task_id', 'field', 'value']).where('task_id', 'in', ids);
    if (field !== undefined) query = query.where('field', '=', field);
    const found = new Map<number, Array<SearchMatch & { order: number }>>();
    for (const row of await query.orderBy('id').execute()) {
      const kind = matchOf(row.value, prepared);
      if (kind === undefined) continue;
      const list = found.get(row.task_id) ?? [];
      list.push({ field: row.field, value: row.value, kind: kind === 'some-words' ? 'words' : kind, order: MATCH_ORDER[kind] });
      found.set(row.task_id, list);
    }
    const matches = new Map<number, SearchMatch[]>();
    for (const [id, list] of found) {
      const best = list.sort((a, b) => a.order - b.order).slice(0, MAX_MATCHES);
      matches.set(id, best.map(({ field: name, value, kind }) => ({ field: name, value, kind })));
    }
    return matches;
  }

  /**
   * Per task its best tier (3 exact, 2 prefix, 1 words) and how many values (exact and prefix) and
   * fields (words) matched, each from its index alone: the B-tree on (norm, field, task_id), and the
   * full-text index whose ids name task and field.
   */
  #hits(prepared: PreparedQuery, field: SearchField | undefined): RawBuilder<unknown> {
    const { norm, upper, words } = prepared;
    const byNorm = upper === undefined ? sql`norm = ${norm}` : sql`norm >= ${norm} AND norm < ${upper}`;
    const onlyField = field === undefined ? sql`` : sql`AND field = ${field}`;
    const normHits = sql`SELECT task_id, max(CASE WHEN norm = ${norm} THEN 3 ELSE 2 END) AS best, count(*) AS n
      FROM search_entries WHERE ${byNorm} ${onlyField} GROUP BY task_id`;
    if (words.length === 0) return normHits;
    const onlySlot = field === undefined ? sql`` : sql`AND id % ${sql.lit(FIELD_SLOTS)} = ${SEARCH_FIELDS.indexOf(field)}`;
    return sql`${normHits} UNION ALL SELECT id / ${sql.lit(FIELD_SLOTS)} AS task_id, 1 AS best, count(*) AS n
      FROM (${this.#wordMatches(prepared)}) words WHERE TRUE ${onlySlot} GROUP BY id / ${sql.lit(FIELD_SLOTS)}`;
  }

  /** The ids of the search_words documents holding every word (the last as a prefix when long enough). */
  #wordMatches({ words, lastIsPrefix }: PreparedQuery): RawBuilder<unknown> {
    if (this.#sqlite) {
      const match = words.map((word) => `"${word}"`).join(' ') + (lastIsPrefix ? '*' : '');
      return sql`SELECT rowid AS id FROM search_words_fts WHERE search_words_fts MATCH ${match}`;
    }
    const tsquery = words.map((word, index) => (index === words.length - 1 && lastIsPrefix ? `${word}:*` : word)).join(' & ');
    return sql`SELECT id FROM search_words WHERE terms_vector @@ to_tsquery('simple', ${tsquery})`;
  }
}
