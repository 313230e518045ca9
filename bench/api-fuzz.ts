import type { ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import fc from 'fast-check';
import { answerProblems } from '../test/helpers/fuzz/invariants.js';
import { droppedUploads, type FuzzCase, malformedCreateRequests, oddPathRequests } from '../test/helpers/fuzz/requests.js';
import { sendRaw } from '../test/helpers/raw-http.js';
import { startService } from './cli-service.js';

/**
 * The API fuzz tests' generators (test/helpers/fuzz/), run much longer against the real service
 * (`start --no-engine` in a child process, so that a crash is seen and counted rather than ending the
 * run; the service is then restarted). Stops after a number of cases or a time budget, whichever comes
 * first. Everything stays on 127.0.0.1. Prints cases tried, 5xx answers, other bad answers, crashes,
 * what refused requests left behind, and requests per second.
 *
 *   node dist/bench/api-fuzz.js [cases=20000] [seconds=120] [seed]
 */

const CASES = Number(process.argv[2] ?? 20_000);
const BUDGET_MS = Number(process.argv[3] ?? 120) * 1000;
const SEED = Number(process.argv[4] ?? Date.now() % 2 ** 31);
const CONCURRENCY = 4;
const BATCH = 500;
/** Problems printed in full; the rest are only counted. */
const SHOWN = 5;

const cases = fc.oneof({ weight: 6, arbitrary: malformedCreateRequests }, { weight: 3, arbitrary: oddPathRequests }, { weight: 1, arbitrary: droppedUploads });

interface Tally {
  tried: number;
  serverErrors: number;
  badAnswers: number;
  crashes: number;
  /** Task ids answered minus tasks deleted: the task rows the database should hold. */
  tasksAnswered: number;
  shown: string[];
}

async function main(): Promise<void> {
  const home = mkdtempSync(join(tmpdir(), 'nestbox-bench-fuzz-'));
  writeFileSync(join(home, 'config.yaml'), 'api:\n  token: ""\n  upload_limit: 65536\n  request_limit: 262144\nlogging:\n  level: warn\n');
  const tally: Tally = { tried: 0, serverErrors: 0, badAnswers: 0, crashes: 0, tasksAnswered: 0, shown: [] };
  let service = await startService(home);
  console.log(`API fuzz: up to ${CASES} cases or ${BUDGET_MS / 1000} s, ${CONCURRENCY} connections at a time, seed ${SEED}, 127.0.0.1`);
  const started = performance.now();
  try {
    for (let batch = 0; tally.tried < CASES && performance.now() - started < BUDGET_MS; batch++) {
      const queue = fc.sample(cases, { numRuns: Math.min(BATCH, CASES - tally.tried), seed: SEED + batch });
      const port = Number(new URL(service.url).port);
      await Promise.all(Array.from({ length: CONCURRENCY }, () => work(queue, port, home, tally, () => service.child)));
      if (service.child.exitCode !== null || service.child.signalCode !== null) {
        tally.crashes++;
        service = await startService(home);
      }
    }
  } finally {
    const seconds = (performance.now() - started) / 1000;
    service.child.kill('SIGTERM');
    if (service.child.exitCode === null) await once(service.child, 'exit');
    report(tally, seconds, home);
    rmSync(home, { recursive: true, force: true });
  }
}

/** Takes cases off the shared queue until it is empty or the service has died. */
async function work(queue: FuzzCase[], port: number, home: string, tally: Tally, child: () => ChildProcess): Promise<void> {
  for (let fuzzCase = queue.shift(); fuzzCase !== undefined && child().exitCode === null; fuzzCase = queue.shift()) {
    const answer = await sendRaw(port, fuzzCase.bytes, { head: fuzzCase.head, dropAfter: fuzzCase.dropAfter });
    tally.tried++;
    if (fuzzCase.dropAfter !== undefined || child().exitCode !== null) continue;
    if (answer.status >= 500) tally.serverErrors++;
    const problems = answerProblems(answer, [home, process.cwd()], fuzzCase.head);
    if (problems.length > 0) {
      tally.badAnswers++;
      if (tally.shown.length < SHOWN) tally.shown.push(`${fuzzCase.label}: ${problems.join('; ')}`);
    }
    if (answer.status === 200) tally.tasksAnswered += taskChange(fuzzCase.label, answer.body);
  }
}

/** Tasks an accepted answer created (create, reboot) or removed (delete). */
function taskChange(label: string, body: string): number {
  const parsed = JSON.parse(body || '{}') as { task_id?: unknown; task_ids?: unknown[]; status?: unknown };
  if (label.includes('/tasks/delete/') && parsed.status === 'OK') return -1;
  return (typeof parsed.task_id === 'number' ? 1 : 0) + (Array.isArray(parsed.task_ids) ? parsed.task_ids.length : 0);
}

function report(tally: Tally, seconds: number, home: string): void {
  const leftovers = stagedLeftovers(home);
  const tasks = taskRows(home);
  console.log(`cases tried: ${tally.tried} in ${seconds.toFixed(1)} s (${(tally.tried / seconds).toFixed(0)} requests/s)`);
  console.log(`5xx answers: ${tally.serverErrors}`);
  console.log(`other bad answers (no answer, not JSON, no message, host path): ${tally.badAnswers - tally.serverErrors}`);
  console.log(`crashes: ${tally.crashes}`);
  console.log(`left behind: ${leftovers} staged uploads or work folders; ${tasks - tally.tasksAnswered} task rows beyond those answered (${tasks} rows)`);
  for (const line of tally.shown) console.log(`  e.g. ${line.slice(0, 400)}`);
}

/** Uploads and submission work folders still in tmppath; task targets (tmp*) are meant to stay. */
function stagedLeftovers(home: string): number {
  return readdirSync(join(home, 'tmp')).filter((name) => !name.startsWith('tmp')).length;
}

function taskRows(home: string): number {
  const db = new Database(join(home, 'nestbox.db'), { readonly: true });
  try {
    return (db.prepare('SELECT count(*) AS n FROM tasks').get() as { n: number }).n;
  } finally {
    db.close();
  }
}

await main();
