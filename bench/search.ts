import { sql } from 'kysely';
import type { SearchField } from '../src/report/search-fields.js';
import { startTestPostgres, type TestPostgres } from '../test/helpers/postgres.js';
import { startTestServer, type TestServer } from '../test/helpers/server.js';
import { ask, indexSynthetic, KINDS, percentile, type QueryKind, queriesOf } from './helpers/search-load.js';
import { seededRandom } from './search-reports.js';

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
    const indexed = await indexSynthetic(server, ANALYSES);
    // PostgreSQL plans from table statistics, which autovacuum gathers after a bulk load like this one.
    if (kind === 'postgres') await sql`ANALYZE`.execute(server.db);
    console.log(
      `\n${kind}: ${ANALYSES} analyses, ${indexed.entries} entries indexed in ${indexed.seconds.toFixed(1)} s ` +
        `(${((indexed.seconds * 1000) / ANALYSES).toFixed(1)} ms per analysis), index ${await indexMiB(server, kind)} MiB`,
    );
    console.log(`${'query kind'.padEnd(20)} ${'results'.padStart(8)}   ${'HTTP p50 / p95'.padStart(16)}   ${'DB p50 / p95'.padStart(16)}   ${'LIKE scan p50 / p95'.padStart(20)}   aim`);
    const random = seededRandom(99);
    for (const queryKind of KINDS) {
      const queries = queriesOf(queryKind, indexed.values, random, QUERIES);
      if (queries.length === 0) continue;
      await measureKind(server, queryKind, queries);
    }
  } finally {
    await server.close();
  }
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

const pair = (values: number[]) => `${percentile(values, 0.5).toFixed(1)} / ${percentile(values, 0.95).toFixed(1)}`;

await main();
