import { sql } from 'kysely';
import { searchDocumentOf } from '../src/report/search-entries.js';
import type { SearchField } from '../src/report/search-fields.js';
import { startTestPostgres, type TestPostgres } from '../test/helpers/postgres.js';
import { startTestServer, type TestServer } from '../test/helpers/server.js';
import { taskRow } from '../test/helpers/tasks.js';
import { type Random, seededRandom, SyntheticReports } from './search-reports.js';

/**
 * Search latency with many analyses indexed, on SQLite and, when PostgreSQL's server binaries are
 * installed (as the tests use them), on a throwaway PostgreSQL. Synthetic reports (search-reports.ts)
 * are indexed through the store the pipeline uses; then GET /ui/api/search is asked, over loopback
 * HTTP, queries of each kind built from values that were indexed. Printed per kind: the median and p95
 * of the whole HTTP answer and of the database part (the answer's tookMs), beside a baseline run in the
 * same process on the same rows: a naive scan, `lower(value) LIKE '%text%'` over every entry (SQL only,
 * fewer queries, as each reads the whole table). The aim is an answer under 200 ms.
 *
 *   node dist/bench/search.js [analyses=10000] [queries per kind=200] [baseline queries per kind=10]
 */

const ANALYSES = Number(process.argv[2] ?? 10_000);
const QUERIES = Number(process.argv[3] ?? 200);
const BASELINE_QUERIES = Number(process.argv[4] ?? 10);
const AIM_MS = 200;
/** Indexed values kept per field to draw queries from. */
const KEPT_VALUES = 5000;

interface QueryKind {
  label: string;
  field?: SearchField;
  /** Which indexed values it is drawn from, and how a value becomes the query text. */
  from: SearchField;
  text?: (value: string, random: Random) => string;
}

const words = (value: string) => value.split(/[^\p{L}\p{N}_-]+/u).filter((word) => word.length >= 3);
const someWords = (value: string, random: Random) => {
  const all = words(value);
  const start = Math.floor(random() * Math.max(1, all.length - 1));
  return all.slice(start, start + 2).join(' ') || value;
};

const KINDS: QueryKind[] = [
  { label: 'sha256, whole', field: 'sha256', from: 'sha256' },
  { label: 'md5, first 12', field: 'md5', from: 'md5', text: (value) => value.slice(0, 12) },
  { label: 'sha1, any field', from: 'sha1' },
  { label: 'ssdeep, whole', field: 'ssdeep', from: 'ssdeep' },
  { label: 'imphash, whole', field: 'imphash', from: 'imphash' },
  { label: 'filename, whole', field: 'filename', from: 'filename' },
  { label: 'domain, whole', field: 'domain', from: 'domain' },
  { label: 'domain, one label', field: 'domain', from: 'domain', text: (value) => value.split('.').at(-2) ?? value },
  { label: 'domain, any field', from: 'domain' },
  { label: 'ip, whole', field: 'ip', from: 'ip' },
  { label: 'url, first 30', field: 'url', from: 'url', text: (value) => value.slice(0, 30) },
  { label: 'signature, whole', field: 'signature', from: 'signature' },
  { label: 'attack, technique', field: 'attack', from: 'attack', text: (value) => value.split('.')[0]! },
  { label: 'mutex, whole', field: 'mutex', from: 'mutex' },
  { label: 'cmdline, two words', field: 'cmdline', from: 'cmdline', text: someWords },
  { label: 'broad: "tmp", any', from: 'cmdline', text: () => 'tmp' },
];

interface Indexed {
  entries: number;
  seconds: number;
  values: Map<SearchField, string[]>;
}

async function main(): Promise<void> {
  console.log(`search bench: ${ANALYSES} synthetic analyses, ${QUERIES} queries per kind (baseline ${BASELINE_QUERIES}), aim < ${AIM_MS} ms`);
  await benchDatabase('sqlite');
  let pg: TestPostgres | undefined;
  try {
    pg = startTestPostgres();
  } catch (error) {
    console.log(`\npostgres: not measured (${(error as Error).message.split('\n')[0]})`);
    return;
  }
  try {
    await benchDatabase('postgres', pg);
  } finally {
    pg.stop();
  }
}

async function benchDatabase(kind: 'sqlite' | 'postgres', pg?: TestPostgres): Promise<void> {
  const server = await startTestServer(pg ? { database: { connection: pg.url } } : {});
  try {
    const indexed = await indexSynthetic(server);
    // PostgreSQL plans from table statistics, which autovacuum gathers after a bulk load like this one.
    if (kind === 'postgres') await sql`ANALYZE`.execute(server.db);
    console.log(
      `\n${kind}: ${ANALYSES} analyses, ${indexed.entries} entries indexed in ${indexed.seconds.toFixed(1)} s ` +
        `(${((indexed.seconds * 1000) / ANALYSES).toFixed(1)} ms per analysis), index ${await indexMiB(server, kind)} MiB`,
    );
    console.log(`${'query kind'.padEnd(20)} ${'results'.padStart(8)}   ${'HTTP p50 / p95'.padStart(16)}   ${'DB p50 / p95'.padStart(16)}   ${'LIKE scan p50 / p95'.padStart(20)}   aim`);
    const random = seededRandom(99);
    for (const queryKind of KINDS) {
      const queries = queriesOf(queryKind, indexed.values, random);
      if (queries.length === 0) continue;
      await measureKind(server, queryKind, queries);
    }
  } finally {
    await server.close();
  }
}

async function indexSynthetic(server: TestServer): Promise<Indexed> {
  const reports = new SyntheticReports(12);
  const samples = new Samples(seededRandom(7));
  let entries = 0;
  const started = performance.now();
  for (let index = 0; index < ANALYSES; index++) {
    const id = await server.ctx.stores.tasks.insert(taskRow({ status: 'reported', target: '/srv/uploads/sample', completed_on: new Date().toISOString() }));
    const document = searchDocumentOf(reports.report(id));
    await server.ctx.stores.search.replace(id, document);
    entries += document.entries.length;
    for (const entry of document.entries) samples.add(entry.field, entry.value);
  }
  return { entries, seconds: (performance.now() - started) / 1000, values: samples.values };
}

/** A uniform sample of at most KEPT_VALUES values per field (reservoir sampling). */
class Samples {
  readonly values = new Map<SearchField, string[]>();
  readonly #seen = new Map<SearchField, number>();

  constructor(private readonly random: Random) {}

  add(field: SearchField, value: string): void {
    const kept = this.values.get(field) ?? [];
    this.values.set(field, kept);
    const seen = (this.#seen.get(field) ?? 0) + 1;
    this.#seen.set(field, seen);
    if (kept.length < KEPT_VALUES) kept.push(value);
    else if (this.random() * seen < KEPT_VALUES) kept[Math.floor(this.random() * KEPT_VALUES)] = value;
  }
}

function queriesOf(kind: QueryKind, values: Map<SearchField, string[]>, random: Random): Array<{ q: string; field?: SearchField }> {
  const pool = values.get(kind.from) ?? [];
  if (pool.length === 0) return [];
  return Array.from({ length: QUERIES }, () => {
    const value = pool[Math.floor(random() * pool.length)]!;
    return { q: kind.text ? kind.text(value, random) : value, field: kind.field };
  });
}

async function measureKind(server: TestServer, kind: QueryKind, queries: Array<{ q: string; field?: SearchField }>): Promise<void> {
  const http: number[] = [];
  const db: number[] = [];
  let results = 0;
  for (const query of queries.slice(0, 10)) await ask(server, query); // warm-up
  for (const query of queries) {
    const started = performance.now();
    const body = await ask(server, query);
    http.push(performance.now() - started);
    db.push(body.tookMs);
    results += body.total;
  }
  const baseline: number[] = [];
  for (const query of queries.slice(0, BASELINE_QUERIES)) {
    const started = performance.now();
    await likeScan(server, query);
    baseline.push(performance.now() - started);
  }
  const met = percentile(http, 0.95) < AIM_MS ? 'met' : 'MISSED';
  console.log(
    `${kind.label.padEnd(20)} ${(results / queries.length).toFixed(1).padStart(8)}   ${pair(http).padStart(16)}   ${pair(db).padStart(16)}   ${pair(baseline).padStart(20)}   ${met}`,
  );
}

async function ask(server: TestServer, query: { q: string; field?: SearchField }): Promise<{ total: number; tookMs: number }> {
  const params = new URLSearchParams({ q: query.q, ...(query.field ? { field: query.field } : {}) });
  const { status, body } = await server.json<{ total: number; tookMs: number; message?: string }>(`/ui/api/search?${params}`);
  if (status !== 200) throw new Error(`search ${params} answered ${status}: ${body.message}`);
  return body;
}

/** The baseline: the same question answered by reading every entry. */
async function likeScan(server: TestServer, query: { q: string; field?: SearchField }): Promise<void> {
  const pattern = `%${query.q.toLowerCase()}%`;
  const onlyField = query.field ? sql`AND field = ${query.field}` : sql``;
  await sql`SELECT task_id FROM search_entries WHERE lower(value) LIKE ${pattern} ${onlyField} GROUP BY task_id ORDER BY task_id DESC`.execute(server.db);
}

async function indexMiB(server: TestServer, kind: 'sqlite' | 'postgres'): Promise<string> {
  const query =
    kind === 'sqlite'
      ? sql<{ bytes: number }>`SELECT sum(pgsize) AS bytes FROM dbstat WHERE name LIKE 'search%' OR name LIKE 'sqlite_autoindex_search%'`
      : sql<{ bytes: string }>`SELECT sum(pg_total_relation_size(c.oid)) AS bytes FROM pg_class c WHERE c.relname IN ('search_entries', 'search_tasks')`;
  const { rows } = await query.execute(server.db);
  return (Number(rows[0]?.bytes ?? 0) / 2 ** 20).toFixed(0);
}

function percentile(values: number[], fraction: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.ceil(fraction * sorted.length) - 1)] ?? 0;
}

const pair = (values: number[]) => `${percentile(values, 0.5).toFixed(1)} / ${percentile(values, 0.95).toFixed(1)}`;

await main();
