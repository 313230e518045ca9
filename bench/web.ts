import { statSync } from 'node:fs';
import type { Browser } from 'puppeteer-core';
import { processTask } from '../src/pipeline/process-task.js';
import { launchBrowser, openPage } from '../test/helpers/browser.js';
import { startTestServer, type TestServer } from '../test/helpers/server.js';
import { ask, indexSynthetic, KINDS, percentile, queriesOf } from './helpers/search-load.js';
import { prepareTask } from './helpers/synthetic-task.js';
import { seededRandom } from './search-reports.js';

/**
 * The web interface's figures (issue 12), on one real server over loopback HTTP:
 * - the analysis page's time to usable in headless chromium for a task of a million events, processed
 *   by the real pipeline (report.json and the calls index): from opening /ui/analysis/<id> until the
 *   overview's score shows, then, after a click on the behaviour tab, until the process tree and the
 *   first page of calls show. The baseline, in the same run: a task of a thousand events opened the
 *   same way, and the report's API routes alone. The cold first load is printed apart from the median.
 * - search latency (GET /ui/api/search, the whole HTTP answer) with many synthetic analyses indexed;
 *   bench/search.ts measures it in more detail, on PostgreSQL too.
 *
 *   node dist/bench/web.js [events=1000000] [analyses=10000] [queries per kind=50]
 */

const EVENTS = Number(process.argv[2] ?? 1_000_000);
const ANALYSES = Number(process.argv[3] ?? 10_000);
const QUERIES = Number(process.argv[4] ?? 50);
const SMALL_EVENTS = 1000;
/** Loads after the cold one; their median is printed. */
const LOADS = 5;
const PAGE_AIM_MS = 2000;
const SEARCH_AIM_MS = 200;
const WAIT = { timeout: 120_000 };

interface PageLoad {
  overview: number;
  behaviour: number;
  total: number;
}

async function main(): Promise<void> {
  const server = await startTestServer();
  const browser = await launchBrowser();
  try {
    const small = await reportedTask(server, SMALL_EVENTS);
    const big = await reportedTask(server, EVENTS);
    console.log(`\nanalysis page, time to usable (score, then process tree + first 100 calls), aim < ${PAGE_AIM_MS} ms`);
    console.log(`${'task'.padEnd(22)} ${'load'.padEnd(7)} ${'overview'.padStart(9)} ${'behaviour'.padStart(10)} ${'total'.padStart(9)}`);
    await measurePage(server, browser, small, `${SMALL_EVENTS} events (baseline)`);
    const usable = await measurePage(server, browser, big, `${EVENTS} events`);
    console.log(`\nthe page's requests alone, ${EVENTS}-event task (median of ${LOADS}, after one cold):`);
    for (const path of [`/tasks/view/${big}`, `/tasks/summary/${big}`, `/ui/api/tasks/${big}/processes`, `/ui/api/tasks/${big}/calls?offset=0&limit=100`, `/tasks/report/${big}/json`]) {
      console.log(`  GET ${path.padEnd(44)} ${ms(await medianRequest(server, path)).padStart(8)}`);
    }
    console.log(`time to usable, ${EVENTS} events: median ${ms(usable)} (aim: under ${ms(PAGE_AIM_MS)}): ${usable < PAGE_AIM_MS ? 'met' : 'NOT met'}`);
    await measureSearch(server);
  } finally {
    await browser.close();
    await server.close();
  }
}

/** A synthetic task of `events` events, processed by the real pipeline; answers its id. */
async function reportedTask(server: TestServer, events: number): Promise<number> {
  const { id, paths } = await prepareTask(server.ctx, events);
  const started = performance.now();
  await processTask(server.ctx, id);
  const status = (await server.ctx.stores.tasks.get(id))?.status;
  if (status !== 'reported') throw new Error(`task ${id} ended ${status}`);
  console.log(`task ${id}: ${events} events processed in ${((performance.now() - started) / 1000).toFixed(1)} s, report.json ${(statSync(paths.reportJson).size / 2 ** 20).toFixed(1)} MiB`);
  return id;
}

/** Opens the page once cold and LOADS more times; prints each and answers the median total. */
async function measurePage(server: TestServer, browser: Browser, id: number, label: string): Promise<number> {
  const cold = await loadPage(server, browser, id);
  print(label, 'cold', cold);
  const loads: PageLoad[] = [];
  for (let load = 0; load < LOADS; load++) loads.push(await loadPage(server, browser, id));
  const middle = { overview: median(loads.map((l) => l.overview)), behaviour: median(loads.map((l) => l.behaviour)), total: median(loads.map((l) => l.total)) };
  print(label, 'median', middle);
  return middle.total;
}

async function loadPage(server: TestServer, browser: Browser, id: number): Promise<PageLoad> {
  const started = performance.now();
  const { page, problems } = await openPage(browser, `${server.url}/ui/analysis/${id}`, { until: 'load' });
  try {
    await page.waitForSelector('.overview .score-value', WAIT);
    const overview = performance.now();
    await page.click('[data-tab="behaviour"]');
    await page.waitForSelector('.process-tree [data-pid]', WAIT);
    await page.waitForSelector('table.calls tr.call', WAIT);
    const done = performance.now();
    if (problems.length > 0) throw new Error(`analysis page ${id}: ${problems.join('; ')}`);
    return { overview: overview - started, behaviour: done - overview, total: done - started };
  } finally {
    await page.close();
  }
}

async function medianRequest(server: TestServer, path: string): Promise<number> {
  const times: number[] = [];
  for (let run = 0; run <= LOADS; run++) {
    const started = performance.now();
    const response = await server.fetch(path);
    await response.arrayBuffer();
    if (!response.ok) throw new Error(`${path} answered ${response.status}`);
    if (run > 0) times.push(performance.now() - started);
  }
  return median(times);
}

async function measureSearch(server: TestServer): Promise<void> {
  const indexed = await indexSynthetic(server, ANALYSES);
  console.log(`\nsearch: ${ANALYSES} analyses, ${indexed.entries} entries indexed in ${indexed.seconds.toFixed(1)} s; ${QUERIES} queries per kind, aim < ${SEARCH_AIM_MS} ms`);
  console.log(`${'query kind'.padEnd(20)} ${'results'.padStart(8)}   ${'HTTP p50 / p95'.padStart(16)}   aim`);
  const random = seededRandom(99);
  for (const kind of KINDS) {
    const queries = queriesOf(kind, indexed.values, random, QUERIES);
    if (queries.length === 0) continue;
    for (const query of queries.slice(0, 5)) await ask(server, query); // warm-up
    const http: number[] = [];
    let results = 0;
    for (const query of queries) {
      const started = performance.now();
      results += (await ask(server, query)).total;
      http.push(performance.now() - started);
    }
    const pair = `${percentile(http, 0.5).toFixed(1)} / ${percentile(http, 0.95).toFixed(1)}`;
    console.log(`${kind.label.padEnd(20)} ${(results / queries.length).toFixed(1).padStart(8)}   ${pair.padStart(16)}   ${percentile(http, 0.95) < SEARCH_AIM_MS ? 'met' : 'MISSED'}`);
  }
}

function print(label: string, load: string, figures: PageLoad): void {
  console.log(`${label.padEnd(22)} ${load.padEnd(7)} ${ms(figures.overview).padStart(9)} ${ms(figures.behaviour).padStart(10)} ${ms(figures.total).padStart(9)}`);
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)] ?? 0;
}

const ms = (value: number) => `${Math.round(value)} ms`;

await main();
