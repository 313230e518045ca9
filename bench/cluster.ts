import { createHash } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { pino } from 'pino';
import { TransferClient } from '../src/cluster/transfer/client.js';
import { ChangeListener } from '../src/db/change-listener.js';
import { type DatabaseHandle, openDatabase } from '../src/db/connect.js';
import { createStores, type Stores } from '../src/db/index.js';
import { TASK_PENDING_CHANNEL } from '../src/db/migrations/0007-task-claims.js';
import type { MachineRow, NewTask } from '../src/db/schema.js';
import { StorageLayout } from '../src/storage/layout.js';
import { nowIso } from '../src/util/time.js';
import { type NestboxProcess, startNestbox, stopNestbox } from '../test/helpers/nestbox-process.js';
import { ethernetTcpPcap } from '../test/helpers/pcap-file.js';
import { startTestPostgres, type TestPostgres } from '../test/helpers/postgres.js';
import { form } from '../test/helpers/server.js';
import { taskRow } from '../test/helpers/tasks.js';
import { cpuSecondsOf } from './helpers/process-cpu.js';
import { percentile } from './helpers/search-load.js';

/**
 * The cluster's claim path on a throwaway PostgreSQL (the tests' own), measured on the database parts a
 * worker uses, with simulated workers: each is a node of its own with one machine, on a connection of its
 * own, and a claimed task is marked completed at once (no analysis runs).
 *
 *  - Claim latency: an idle worker listens on the task-pending notification and claims when woken; the
 *    time from the start of the submitting insert to the claim's commit (task running on the worker),
 *    median of N, beside the same worker woken only by the scheduler's 500 ms poll (the fallback).
 *  - Claims per second: 8 workers race for 2,000 pending tasks; every task must be claimed exactly once
 *    (asserted). Beside it, in the same run on as many tasks, the claim nestbox had before the cluster:
 *    read the queue's head, then a conditional update per candidate (no SKIP LOCKED).
 *  - The main node's CPU per completed task: a real `nestbox start --role main` process; M file tasks
 *    (each its own sample) are created through its API, then the simulated workers claim them, fetch each
 *    sample from it and hand it a small task folder through /cluster/v1, as real workers do after
 *    processing. Its CPU time (from /proc) over the tasks, per task, beside the same process left idle
 *    as long (heartbeats and queue triage alone).
 *
 *   node dist/bench/cluster.js [latency samples=50] [tasks=2000] [workers=8] [main node tasks=200]
 */

const LATENCY_SAMPLES = Number(process.argv[2] ?? 50);
const TASKS = Number(process.argv[3] ?? 2000);
const WORKERS = Number(process.argv[4] ?? 8);
const MAIN_NODE_TASKS = Number(process.argv[5] ?? 200);
const NODE_TOKEN = 'bench-node-secret';
const POLL_MS = 500;
const AIM_LATENCY_MS = 100;
const AIM_CLAIMS_PER_SECOND = 500;

interface Worker {
  node: string;
  handle: DatabaseHandle;
  stores: Stores;
  machine: MachineRow;
}

function newTask(): NewTask {
  const now = nowIso();
  return taskRow({ target: 'http://example.test/', category: 'url', clock: now, added_on: now });
}

async function main(): Promise<void> {
  const pg = startTestPostgres();
  const home = mkdtempSync(join(tmpdir(), 'nestbox-bench-cluster-'));
  const workers: Worker[] = [];
  try {
    const submitter = await openDatabase(pg.url, home);
    for (let i = 1; i <= WORKERS; i++) workers.push(await startWorker(pg, home, `worker${i}`));
    console.log(`cluster bench: PostgreSQL ${await serverVersion(submitter)}, ${WORKERS} simulated workers, ${TASKS} tasks, ${LATENCY_SAMPLES} latency samples`);
    await measureLatency(createStores(submitter.db), workers[0]!, pg);
    await measureThroughput(createStores(submitter.db), workers);
    await measureMainNodeCpu(pg, home, workers);
    await submitter.close();
  } finally {
    await Promise.all(workers.map((worker) => worker.handle.close()));
    pg.stop();
    rmSync(home, { recursive: true, force: true });
  }
}

async function serverVersion(handle: DatabaseHandle): Promise<string> {
  const { sql } = await import('kysely');
  const result = await sql<{ server_version: string }>`show server_version`.execute(handle.db);
  return result.rows[0]!.server_version;
}

async function startWorker(pg: TestPostgres, home: string, node: string): Promise<Worker> {
  const handle = await openDatabase(pg.url, home);
  const stores = createStores(handle.db);
  const scope = { node, everything: false, unassigned: false };
  await stores.machines.syncFromConfig(
    [{ name: `${node}-linux1`, kind: 'linux', platform: 'linux', tags: [], ip: '10.0.0.2', interface: null, snapshot: null, resultserver_ip: '10.0.0.1', resultserver_port: 2042, options: [], settings: {} }],
    scope,
  );
  const machine = (await stores.machines.listOwned(scope))[0]!;
  return { node, handle, stores, machine };
}

/** The claim the scheduler makes on PostgreSQL (db/task-claims.ts); the claimed task is done at once. */
async function claimAndFinish(worker: Worker): Promise<number | undefined> {
  const claim = await worker.stores.tasks.claimNext({
    node: worker.node,
    unassignedMachines: false,
    busyMachineIds: [],
    managers: new Map([['linux', 'linux']]),
  });
  if (!claim) return undefined;
  await worker.stores.tasks.finishRun(claim.task.id, worker.node, 'completed', { completed_on: nowIso() });
  await worker.stores.machines.unlock(claim.machine.id);
  return claim.task.id;
}

/** The claim before the cluster: the queue's head, then per candidate a transaction of conditional updates. */
async function claimTheOldWay(worker: Worker): Promise<number | undefined> {
  const { stores, machine, node } = worker;
  const head = await stores.tasks.queue(100);
  if (head.length === 0) return undefined;
  for (const task of head) {
    const won = await stores.transaction(async (trx) => {
      if (!(await stores.machines.lock(machine.id, trx))) return false;
      if (!(await stores.tasks.transition(task.id, ['pending'], 'running', { started_on: nowIso(), node }, trx))) {
        await stores.machines.unlock(machine.id, trx);
        return false;
      }
      await stores.guests.create(task.id, machine, 'linux', trx);
      return true;
    });
    if (!won) continue;
    await stores.tasks.finishRun(task.id, node, 'completed', { completed_on: nowIso() });
    await stores.machines.unlock(machine.id);
    return task.id;
  }
  return -1;
}

async function measureLatency(submitter: Stores, worker: Worker, pg: TestPostgres): Promise<void> {
  const claimedAt = new Map<number, number>();
  let claiming: Promise<void> | undefined;
  let again = false;
  const wake = () => {
    if (claiming) return void (again = true);
    claiming = (async () => {
      do {
        again = false;
        for (let id = await claimAndFinish(worker); id !== undefined; id = await claimAndFinish(worker)) claimedAt.set(id, performance.now());
      } while (again);
    })().finally(() => (claiming = undefined));
  };
  const listener = new ChangeListener(pg.url, TASK_PENDING_CHANNEL, wake);
  await listener.start();
  const notified = await latencies(submitter, claimedAt, LATENCY_SAMPLES);
  await listener.close();
  const poll = setInterval(wake, POLL_MS);
  const polled = await latencies(submitter, claimedAt, Math.min(LATENCY_SAMPLES, 20));
  clearInterval(poll);
  const median = percentile(notified, 0.5);
  console.log(`\nclaim latency, submit -> running on an idle worker (ms)`);
  console.log(`  LISTEN/NOTIFY wake-up   median ${median.toFixed(1)}   p95 ${percentile(notified, 0.95).toFixed(1)}   max ${Math.max(...notified).toFixed(1)}   (n=${notified.length})   aim < ${AIM_LATENCY_MS}: ${median < AIM_LATENCY_MS ? 'met' : 'MISSED'}`);
  console.log(`  baseline: ${POLL_MS} ms poll    median ${percentile(polled, 0.5).toFixed(1)}   p95 ${percentile(polled, 0.95).toFixed(1)}   max ${Math.max(...polled).toFixed(1)}   (n=${polled.length})`);
}

async function latencies(submitter: Stores, claimedAt: Map<number, number>, samples: number): Promise<number[]> {
  const results: number[] = [];
  for (let i = 0; i < samples; i++) {
    const submitted = performance.now();
    const id = await submitter.tasks.insert(newTask());
    while (!claimedAt.has(id)) {
      if (performance.now() - submitted > 10_000) throw new Error(`task ${id} was not claimed within 10 s`);
      await sleep(0.2);
    }
    results.push(claimedAt.get(id)! - submitted);
    // The worker idles between submissions, for a random part of a poll period, so that submissions fall
    // at every phase of the poll.
    await sleep(20 + Math.random() * POLL_MS);
  }
  return results;
}

async function measureThroughput(submitter: Stores, workers: Worker[]): Promise<void> {
  console.log(`\nclaims per second, ${workers.length} workers racing for ${TASKS} pending tasks`);
  const skipLocked = await race(submitter, workers, claimAndFinish);
  const old = await race(submitter, workers, claimTheOldWay);
  const rate = skipLocked.claims / skipLocked.seconds;
  console.log(`  FOR UPDATE SKIP LOCKED   ${rate.toFixed(0)} claims/s   (${skipLocked.claims} claims in ${skipLocked.seconds.toFixed(2)} s, each task exactly once: yes)   aim >= ${AIM_CLAIMS_PER_SECOND}: ${rate >= AIM_CLAIMS_PER_SECOND ? 'met' : 'MISSED'}`);
  console.log(`    the bench process (all ${workers.length} workers' clients) used ${skipLocked.cpuSeconds.toFixed(2)} s of CPU in ${skipLocked.seconds.toFixed(2)} s`);
  console.log(`  baseline: old claim      ${(old.claims / old.seconds).toFixed(0)} claims/s   (${old.claims} claims in ${old.seconds.toFixed(2)} s, each task exactly once: yes, ${old.lost} lost races)`);
}

/** Inserts the tasks, lets every worker claim until the queue is empty, and checks each task was claimed once. */
async function race(
  submitter: Stores,
  workers: Worker[],
  claim: (worker: Worker) => Promise<number | undefined>,
): Promise<{ claims: number; seconds: number; lost: number; cpuSeconds: number }> {
  const ids = await submitter.transaction(async (trx) => {
    const made: number[] = [];
    for (let i = 0; i < TASKS; i++) made.push(await submitter.tasks.insert(newTask(), trx));
    return made;
  });
  const claimed: number[] = [];
  let lost = 0;
  const cpu = process.cpuUsage();
  const started = performance.now();
  await Promise.all(
    workers.map(async (worker) => {
      for (;;) {
        const id = await claim(worker);
        if (id === undefined) return;
        if (id < 0) lost++;
        else claimed.push(id);
      }
    }),
  );
  const seconds = (performance.now() - started) / 1000;
  const used = process.cpuUsage(cpu);
  const cpuSeconds = (used.user + used.system) / 1e6;
  const counts = new Map<number, number>();
  for (const id of claimed) counts.set(id, (counts.get(id) ?? 0) + 1);
  const twice = [...counts].filter(([, count]) => count > 1);
  const missed = ids.filter((id) => !counts.has(id));
  if (twice.length > 0 || missed.length > 0 || claimed.length !== ids.length) {
    throw new Error(`claims were not exactly once: ${twice.length} claimed twice, ${missed.length} never claimed`);
  }
  return { claims: claimed.length, seconds, lost, cpuSeconds };
}

async function measureMainNodeCpu(pg: TestPostgres, home: string, workers: Worker[]): Promise<void> {
  const mainHome = join(home, 'main');
  const node = await startNestbox(mainHome, {
    NESTBOX_DATABASE_CONNECTION: pg.url,
    NESTBOX_CLUSTER_NODE_NAME: 'main',
    NESTBOX_CLUSTER_NODE_TOKEN: NODE_TOKEN,
    NESTBOX_MACHINES: '[]',
  }, ['--role', 'main']);
  try {
    // The simulated workers are live nodes, so the main node's queue triage leaves their tasks queued.
    const leaseUntil = new Date(Date.now() + 3600_000).toISOString();
    for (const worker of workers) await worker.stores.nodes.register({ name: worker.node, role: 'worker', url: '', version: 'bench' }, nowIso(), leaseUntil);
    const pid = node.child.pid!;
    const started = performance.now();
    const atStart = cpuSecondsOf(pid);
    await createThroughApi(node, MAIN_NODE_TASKS);
    const afterCreating = cpuSecondsOf(pid);
    const handedOver = await Promise.all(workers.map((worker) => transferUntilEmpty(worker, node, home)));
    const atEnd = cpuSecondsOf(pid);
    const seconds = (performance.now() - started) / 1000;
    const completed = handedOver.reduce((sum, count) => sum + count, 0);
    const reported = await workers[0]!.handle.db.selectFrom('tasks').select(({ fn }) => fn.countAll<string>().as('count')).where('status', '=', 'reported').executeTakeFirstOrThrow();
    if (completed !== MAIN_NODE_TASKS || Number(reported.count) !== MAIN_NODE_TASKS) {
      throw new Error(`${completed} of ${MAIN_NODE_TASKS} tasks were handed over, ${reported.count} reported`);
    }
    const idleFrom = cpuSecondsOf(pid);
    await sleep(seconds * 1000);
    const idle = cpuSecondsOf(pid) - idleFrom;

    const perTask = (cpu: number) => ((cpu * 1000) / MAIN_NODE_TASKS).toFixed(1).padStart(6);
    console.log(`\nthe main node's CPU per completed task (a nestbox start --role main process; ${MAIN_NODE_TASKS} file tasks, ${workers.length} simulated workers)`);
    console.log(`  per completed task        ${perTask(atEnd - atStart)} ms   (${(atEnd - atStart).toFixed(2)} s of CPU in ${seconds.toFixed(2)} s)`);
    console.log(`    creating it (API)       ${perTask(afterCreating - atStart)} ms   (what a single all node spends as well)`);
    console.log(`    sample out, results in  ${perTask(atEnd - afterCreating)} ms   (/cluster/v1: sample fetch, results upload)`);
    console.log(`  baseline: idle as long    ${perTask(idle)} ms   (${idle.toFixed(2)} s of CPU in ${seconds.toFixed(2)} s: heartbeats and queue triage)`);
  } finally {
    await stopNestbox(node);
  }
}

/** Creates `count` file tasks through the main node's API, four at a time, each with a sample of its own. */
async function createThroughApi(node: NestboxProcess, count: number): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: 4 }, async () => {
      for (let n = next++; n < count; n = next++) {
        const body = form({ timeout: '30' }, [['file', `bench${n}.sh`, `#!/bin/sh\necho bench ${n}\n`]]);
        const response = await fetch(`${node.url}/tasks/create/file`, { method: 'POST', body });
        if (response.status !== 200) throw new Error(`creating a task answered ${response.status}: ${await response.text()}`);
      }
    }),
  );
}

/**
 * A worker's part of each task it claims, without running anything: fetch the sample from the main node,
 * mark the run completed, write a small task folder and hand it over, then mark the task reported.
 * Returns how many tasks it handed over once the queue is empty.
 */
async function transferUntilEmpty(worker: Worker, node: NestboxProcess, home: string): Promise<number> {
  const layout = new StorageLayout(join(home, worker.node, 'storage'), join(home, worker.node, 'tmp'));
  layout.ensure();
  const client = new TransferClient({
    mainUrl: node.url,
    credential: NODE_TOKEN,
    nodeName: worker.node,
    layout,
    sampleLimit: 2 ** 20,
    retry: { attempts: 1, backoffMs: 0, log: pino({ level: 'silent' }) },
  });
  const { stores } = worker;
  let handedOver = 0;
  for (;;) {
    const claim = await stores.tasks.claimNext({ node: worker.node, unassignedMachines: false, busyMachineIds: [], managers: new Map([['linux', 'linux']]) });
    if (!claim) return handedOver;
    const id = claim.task.id;
    const sample = (await stores.samples.get(claim.task.sample_id!))!;
    await client.fetchSample(id, sample.sha256);
    await stores.tasks.finishRun(id, worker.node, 'completed', { completed_on: nowIso() });
    await stores.machines.unlock(claim.machine.id);
    const folder = smallTaskFolder(layout, id);
    await client.uploadResults(id, folder);
    await stores.tasks.transition(id, ['completed'], 'reported', { score: 0 });
    rmSync(folder, { recursive: true, force: true });
    handedOver++;
  }
}

/** What a short analysis leaves in its folder, a few kilobytes: report, logs, a capture, a screenshot. */
function smallTaskFolder(layout: StorageLayout, id: number): string {
  const paths = layout.analysis(id);
  paths.create();
  writeFileSync(paths.reportJson, JSON.stringify({ info: { id, score: 0 }, behavior: { processes: [] }, padding: 'x'.repeat(4000) }));
  writeFileSync(paths.analysisLog, `task ${id}: analysis completed successfully\n`.repeat(20));
  writeFileSync(join(paths.logs, 'events.jsonl'), `{"kind":"process.exec","path":"/bin/sh","ret":0}\n`.repeat(50));
  writeFileSync(paths.pcap, ethernetTcpPcap([{ src: '10.200.0.2', sport: 40000, dst: '192.0.2.7', dport: 80, payload: `GET /${id} HTTP/1.1\r\n\r\n` }]));
  writeFileSync(join(paths.shots, '0001.jpg'), createHash('sha256').update(String(id)).digest());
  return paths.dir;
}

await main();
