import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pino } from 'pino';
import { createContext } from '../src/app.js';
import { validateConfig } from '../src/config/load.js';
import { processTask } from '../src/pipeline/process-task.js';
import { createService } from '../src/service.js';
import { prepareTask } from './helpers/synthetic-task.js';

/**
 * The analysis page's behaviour section for a task whose behaviour log holds a million calls: the task
 * is processed by the real pipeline (which writes report.json and the calls index), then a real server
 * answers the pages the interface asks for over loopback HTTP. Beside each, the baseline: reading
 * report.json through the API and filtering its calls in memory, as a page without the index would
 * (and report.json holds only the first calls of each process: processing's limits).
 *
 *   node dist/bench/calls-page.js [events]     (default 1,000,000)
 */

const EVENTS = Number(process.argv[2] ?? 1_000_000);
/** Timed runs of each case after the first (cold) one; the median is printed. */
const RUNS = 5;
/** Aim of issue 12: the page opens (processes and first calls) in under two seconds. */
const OPEN_AIM_MS = 2000;

interface Call {
  pid: number;
  api: string;
  category: string;
  arguments: Record<string, unknown>;
}

interface Case {
  name: string;
  /** The interface's requests, all sent at once; answers the number of calls listed. */
  paths: string[];
  /** The same page from report.json, filtered in memory. */
  baseline: (calls: Call[]) => Call[];
}

function cases(taskId: number): Case[] {
  const api = `/ui/api/tasks/${taskId}`;
  const page = (calls: Call[], offset = 0) => calls.slice(offset, offset + 100);
  return [
    { name: 'open: processes + first 100 calls', paths: [`${api}/processes`, `${api}/calls?offset=0&limit=100`], baseline: (calls) => page(calls) },
    {
      name: 'one process, file calls',
      paths: [`${api}/calls?pid=1008&category=file&limit=100`],
      baseline: (calls) => page(calls.filter((call) => call.pid === 1008 && call.category === 'file')),
    },
    {
      name: 'connect calls, offset 100,000',
      paths: [`${api}/calls?api=connect&offset=100000&limit=100`],
      baseline: (calls) => page(calls.filter((call) => call.api === 'connect'), 100_000),
    },
    {
      name: 'argument text "file-777776"',
      paths: [`${api}/calls?q=file-777776&limit=100`],
      baseline: (calls) => page(calls.filter((call) => JSON.stringify(call.arguments).includes('file-777776'))),
    },
    { name: 'all calls, offset 900,000', paths: [`${api}/calls?offset=900000&limit=100`], baseline: (calls) => page(calls, 900_000) },
  ];
}

async function main(): Promise<void> {
  const home = mkdtempSync(join(tmpdir(), 'nestbox-bench-calls-'));
  const config = validateConfig({ paths: { storage: join(home, 'storage'), tmppath: join(home, 'tmp') }, logging: { level: 'silent' } });
  const ctx = await createContext({ config, home, log: pino({ level: 'silent' }) });
  const service = await createService(ctx, { engine: false });
  try {
    const { id, paths } = await prepareTask(ctx, EVENTS);
    const started = performance.now();
    await processTask(ctx, id);
    const status = (await ctx.stores.tasks.get(id))?.status;
    if (status !== 'reported') throw new Error(`task ended ${status}`);
    console.log(`${EVENTS} events processed in ${seconds(performance.now() - started)} (report.json and the calls index)`);
    console.log(`report.json ${mib(paths.reportJson)}, calls index ${mib(paths.callsIndex)}, events.jsonl ${mib(join(paths.logs, 'events.jsonl'))}\n`);
    await service.app.listen({ host: '127.0.0.1', port: 0 });
    const address = service.app.server.address();
    if (address === null || typeof address === 'string') throw new Error('no TCP address');
    const base = `http://127.0.0.1:${address.port}`;
    await compare(base, id);
    rmSync(paths.callsIndex);
    const rebuilt = await timed(() => fetchAll(base, [`/ui/api/tasks/${id}/processes`, `/ui/api/tasks/${id}/calls?limit=100`]));
    console.log(`opening it for a task reported without an index (built on that first request, from events.jsonl): ${seconds(rebuilt.ms)}`);
  } finally {
    await service.close();
    await ctx.close();
    rmSync(home, { recursive: true, force: true });
  }
}

async function compare(base: string, taskId: number): Promise<void> {
  console.log(`${'case'.padEnd(36)} ${'first'.padStart(9)} ${'median'.padStart(9)} ${'listed'.padStart(7)} ${'total'.padStart(8)}   ${'baseline'.padStart(9)} ${'listed'.padStart(7)}`);
  let open = 0;
  for (const [index, test] of cases(taskId).entries()) {
    const first = await timed(() => fetchAll(base, test.paths));
    const runs: number[] = [];
    for (let run = 0; run < RUNS; run++) runs.push((await timed(() => fetchAll(base, test.paths))).ms);
    const baseline = await timed(async () => test.baseline(await reportCalls(base, taskId)));
    if (index === 0) open = first.ms;
    const line = [
      test.name.padEnd(36),
      ms(first.ms).padStart(9),
      ms(median(runs)).padStart(9),
      String(first.value.listed).padStart(7),
      String(first.value.total).padStart(8),
      '',
      ms(baseline.ms).padStart(9),
      String(baseline.value.length).padStart(7),
    ];
    console.log(line.join(' '));
  }
  const kept = (await reportCalls(base, taskId)).length;
  console.log(`\nbaseline: report.json lists ${kept} of the calls (processing's limits), so it cannot show the others`);
  console.log(`opening the behaviour section took ${ms(open)} (aim: under ${ms(OPEN_AIM_MS)}): ${open < OPEN_AIM_MS ? 'met' : 'NOT met'}`);
}

/** The answers of a case's requests, sent at once: the calls the last one lists and its total. */
async function fetchAll(base: string, paths: string[]): Promise<{ listed: number; total: number }> {
  const answers = await Promise.all(paths.map((path) => json(base + path)));
  const last = answers.at(-1) as { calls: unknown[]; total: number };
  return { listed: last.calls.length, total: last.total };
}

/** Every call report.json lists, in process order. */
async function reportCalls(base: string, taskId: number): Promise<Call[]> {
  const report = (await json(`${base}/tasks/report/${taskId}`)) as { behavior: { processes: Array<{ pid: number; calls: Call[] }> } };
  return report.behavior.processes.flatMap((process) => process.calls.map((call) => ({ ...call, pid: process.pid })));
}

async function json(url: string): Promise<unknown> {
  const response = await fetch(url);
  if (!response.ok) throw new Error(`${url}: ${response.status} ${await response.text()}`);
  return response.json();
}

async function timed<T>(work: () => Promise<T>): Promise<{ ms: number; value: T }> {
  const started = performance.now();
  const value = await work();
  return { ms: performance.now() - started, value };
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)] ?? 0;
}

const ms = (value: number) => `${Math.round(value)} ms`;
const seconds = (value: number) => `${(value / 1000).toFixed(1)} s`;
const mib = (path: string) => `${(statSync(path).size / 1048576).toFixed(0)} MiB`;

await main();
