import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { type DatabaseHandle, openDatabase } from '../../src/db/connect.js';
import { type NestboxProcess, startNestbox, stopNestbox, waitFor } from '../helpers/nestbox-process.js';
import { startTestPostgres, type TestPostgres } from '../helpers/postgres.js';

/**
 * Issue 13 on one host: a main node and two workers, each a `nestbox start` process with its own home and
 * its own linux machine, sharing a throwaway PostgreSQL. Short heartbeats and leases, so that a killed
 * worker's lease runs out within seconds.
 */
const LEASE_SECONDS = 3;
const NODE_TOKEN = 'cluster-node-secret';
/** Runs until the analysis' timeout (a long sleep would return at once: the monitor skips it). */
const SLOW = '#!/bin/sh\necho started > /tmp/started\nwhile :; do sleep 1; done\n';
const QUICK = '#!/bin/sh\necho hello > /tmp/hello\n';
/** Runs long enough for the machine's virtual display to come up and be shot (screenshots are on by default). */
const SHOWN = (n: number) => `#!/bin/sh\necho shown ${n} > /tmp/shown\nsleep 4\n`;
/** A different sample each, so that every task's worker fetches its sample from the main node. */
const NUMBERED = (n: number) => `#!/bin/sh\necho sample ${n} > /tmp/numbered\n`;
const PCAP_MAGIC = ['d4c3b2a1', 'a1b2c3d4', '4d3cb2a1', 'a1b23c4d'];
const JPEG_MAGIC = 'ffd8ff';

describe('a cluster of nestbox processes on one PostgreSQL', { timeout: 900_000 }, () => {
  let pg: TestPostgres;
  let db: DatabaseHandle;
  const homes: Record<string, string> = {};
  const nodes: Record<string, NestboxProcess | undefined> = {};

  /** `port`: the main node's, when it starts again (the workers know it by its address). */
  function start(name: string, role: 'main' | 'worker', tags: string[] = [], port?: string): Promise<NestboxProcess> {
    homes[name] ??= mkdtempSync(join(tmpdir(), `nestbox-cluster-${name}-`));
    return startNestbox(homes[name], {
      NESTBOX_DATABASE_CONNECTION: pg.url,
      NESTBOX_CLUSTER_NODE_NAME: name,
      NESTBOX_CLUSTER_HEARTBEAT_SECONDS: '0.5',
      NESTBOX_CLUSTER_LEASE_SECONDS: String(LEASE_SECONDS),
      NESTBOX_MACHINES: JSON.stringify(role === 'main' ? [] : [{ name: `${name}-linux1`, tags }]),
      // Workers fetch samples from the main node and hand results to it over HTTP.
      NESTBOX_CLUSTER_NODE_TOKEN: NODE_TOKEN,
      ...(role === 'worker' ? { NESTBOX_CLUSTER_MAIN_URL: nodes.main!.url } : {}),
    }, ['--role', role, ...(port ? ['--port', port] : [])]);
  }

  before(async () => {
    pg = startTestPostgres();
    nodes.main = await start('main', 'main');
    [nodes.w1, nodes.w2] = await Promise.all([start('w1', 'worker', ['w1-tag']), start('w2', 'worker')]);
    db = await openDatabase(pg.url, homes.main!);
  });
  after(async () => {
    for (const node of Object.values(nodes)) await stopNestbox(node);
    await db?.close();
    pg?.stop();
    for (const home of Object.values(homes)) rmSync(home, { recursive: true, force: true });
  });

  async function submit(name: string, script: string | Uint8Array, fields: Record<string, string> = {}): Promise<number> {
    const body = new FormData();
    body.append('file', new Blob([script]), name);
    for (const [key, value] of Object.entries({ timeout: '30', ...fields })) body.append(key, value);
    const response = await fetch(`${nodes.main!.url}/tasks/create/file`, { method: 'POST', body });
    assert.equal(response.status, 200, await response.clone().text());
    return ((await response.json()) as { task_id: number }).task_id;
  }
  const task = async (id: number) => (await db.db.selectFrom('tasks').selectAll().where('id', '=', id).executeTakeFirst())!;
  const errorsOf = async (id: number) => (await db.db.selectFrom('errors').select('message').where('task_id', '=', id).orderBy('id').execute()).map((e) => e.message);
  const ended = (id: number, timeoutMs = 400_000) =>
    waitFor(`task ${id} to end`, async () => {
      const row = await task(id);
      return ['reported', 'failed_analysis', 'failed_processing'].includes(row.status) ? row : undefined;
    }, timeoutMs, 500);

  const FINAL = ['reported', 'failed_analysis', 'failed_processing', 'failed_reporting'];
  /** The tasks once every one of them has ended, in the order of `ids`. */
  const allEnded = (ids: number[], timeoutMs: number) =>
    waitFor(`${ids.length} tasks to end`, async () => {
      const rows = await db.db.selectFrom('tasks').selectAll().where('id', 'in', ids).execute();
      if (!rows.every((row) => FINAL.includes(row.status))) return undefined;
      return ids.map((id) => rows.find((row) => row.id === id)!);
    }, timeoutMs, 1000);
  /** Each task ran exactly once: one guest (one machine run) per task, and no task was queued again. */
  async function ranOnce(ids: number[]): Promise<void> {
    const guests = await db.db.selectFrom('guests').select('task_id').where('task_id', 'in', ids).execute();
    assert.deepEqual(guests.map((guest) => guest.task_id).sort((x, y) => x - y), [...ids].sort((x, y) => x - y), 'one run per task');
    const requeued = await db.db.selectFrom('errors').select(['task_id', 'message']).where('task_id', 'in', ids).where('message', 'like', '%queued again%').execute();
    assert.deepEqual(requeued, [], 'no task was queued again');
  }
  /** The main node serves the task's JSON report (of this very sample) and its pcap. */
  async function servedByMain(id: number, sample: string | Uint8Array): Promise<any> {
    const response = await fetch(`${nodes.main!.url}/tasks/report/${id}`);
    assert.equal(response.status, 200, `report of task ${id}`);
    assert.match(response.headers.get('content-type') ?? '', /application\/json/);
    const report = (await response.json()) as any;
    assert.equal(report.info.id, id);
    assert.equal(report.target.file.sha256, createHash('sha256').update(sample).digest('hex'), `task ${id} reports its own sample`);
    const pcap = await fetch(`${nodes.main!.url}/pcap/get/${id}`);
    assert.equal(pcap.status, 200, `pcap of task ${id}`);
    assert.ok(PCAP_MAGIC.includes(Buffer.from(await pcap.arrayBuffer()).subarray(0, 4).toString('hex')), `task ${id}: a pcap file`);
    return report;
  }

  /** A slow task submitted and running: claimed, and its machine started (the analysis is under way). */
  async function slowTaskRunning(): Promise<{ id: number; node: string; guestId: number }> {
    const id = await submit('slow.sh', SLOW, { timeout: '40' });
    return waitFor('the analysis to run', async () => {
      const row = await task(id);
      const guest = await db.db.selectFrom('guests').select(['id', 'status']).where('task_id', '=', id).executeTakeFirst();
      return row.status === 'running' && guest?.status === 'running' ? { id, node: row.node!, guestId: guest.id } : undefined;
    }, 360_000, 200);
  }

  it('registers the three nodes with their roles and addresses, machines only on the workers', async () => {
    const rows = await db.db.selectFrom('nodes').select(['name', 'role', 'url']).orderBy('name').execute();
    assert.deepEqual(rows.map((row) => [row.name, row.role]), [['main', 'main'], ['w1', 'worker'], ['w2', 'worker']]);
    assert.equal(rows.find((row) => row.name === 'main')!.url, nodes.main!.url);
    const machines = await db.db.selectFrom('machines').select(['name', 'node']).where('enabled', '=', 1).orderBy('name').execute();
    assert.deepEqual(machines, [{ name: 'w1-linux1', node: 'w1' }, { name: 'w2-linux1', node: 'w2' }]);
  });

  it('runs a task that needs a tag on the worker that has it', async () => {
    const id = await submit('tagged.sh', QUICK, { tags: 'w1-tag' });
    const done = await ended(id);
    assert.equal(done.status, 'reported', (await errorsOf(id)).join('; '));
    assert.equal(done.node, 'w1');
    // The worker handed its results over: the main node serves the report.
    const report = await fetch(`${nodes.main!.url}/tasks/report/${id}`);
    assert.equal(report.status, 200);
    assert.equal(((await report.json()) as { info: { id: number } }).info.id, id);
  });

  it('shares a batch between the workers, each task claimed once', async () => {
    const ids = await Promise.all(Array.from({ length: 6 }, (_, i) => submit(`quick${i}.sh`, QUICK)));
    const done = await Promise.all(ids.map((id) => ended(id)));
    for (const row of done) assert.equal(row.status, 'reported', `task ${row.id}`);
    const guests = await db.db.selectFrom('guests').select(['task_id', 'name']).where('task_id', 'in', ids).execute();
    assert.deepEqual(guests.map((guest) => guest.task_id).sort((x, y) => x - y), [...ids].sort((x, y) => x - y), 'one run per task');
    for (const row of done) assert.equal(guests.find((guest) => guest.task_id === row.id)!.name, `${row.node}-linux1`);
    assert.deepEqual(new Set(done.map((row) => row.node)), new Set(['w1', 'w2']), 'both workers took work');
  });

  it("requeues a SIGKILLed worker's task when its lease expires, finishes it on the other worker, and the restarted worker takes nothing back", async () => {
    const { id, node: killed } = await slowTaskRunning();
    const survivor = killed === 'w1' ? 'w2' : 'w1';
    await stopNestbox(nodes[killed], 'SIGKILL');
    nodes[killed] = undefined;

    const moved = await waitFor('the task to run on the other worker', async () => {
      const row = await task(id);
      return row.status === 'running' && row.node === survivor ? row : undefined;
    }, 120_000, 200);
    assert.equal(moved.node, survivor);
    const errors = await errorsOf(id);
    assert.ok(errors.some((message) => message.includes(`lease of node ${killed} expired`)), errors.join('; '));
    const machine = await db.db.selectFrom('machines').select('locked').where('name', '=', `${killed}-linux1`).executeTakeFirstOrThrow();
    assert.equal(machine.locked, 0, "the dead worker's machine is freed");

    // The killed worker comes back while the other one still runs the task: it recovers only its own.
    nodes[killed] = await start(killed, 'worker', killed === 'w1' ? ['w1-tag'] : []);
    const after = await task(id);
    assert.equal(after.node, survivor);
    assert.notEqual(after.status, 'pending');
    const done = await ended(id);
    assert.equal(done.status, 'reported', (await errorsOf(id)).join('; '));
    assert.equal(done.node, survivor);
    const finalErrors = await errorsOf(id);
    assert.equal(finalErrors.filter((message) => message.includes('expired')).length, 1, finalErrors.join('; '));
    assert.ok(!finalErrors.some((message) => /restart of nestbox/.test(message)), finalErrors.join('; '));
  });

  it('a worker stops the analysis of a task that was requeued from it, and records nothing for it', async () => {
    const { id, node: first, guestId } = await slowTaskRunning();
    // What another node's lease recovery does when this worker's heartbeat cannot reach the database.
    const started = Date.now();
    await db.db.updateTable('tasks').set({ status: 'pending', node: null, started_on: null }).where('id', '=', id).execute();
    await db.db.updateTable('machines').set({ locked: 0 }).where('name', '=', `${first}-linux1`).execute();
    const stopped = await waitFor('the first worker to stop its analysis', async () => {
      const row = await db.db.selectFrom('guests').select('status').where('id', '=', guestId).executeTakeFirstOrThrow();
      return row.status === 'stopped' ? true : undefined;
    }, 60_000, 200);
    assert.ok(stopped);
    assert.ok(Date.now() - started < 30_000, 'stopped well before the analysis timeout');
    const done = await ended(id);
    assert.equal(done.status, 'reported', (await errorsOf(id)).join('; '));
    assert.notEqual(done.node, first, 'the other worker ran it');
    const errors = await errorsOf(id);
    assert.ok(!errors.some((message) => /interrupted/.test(message)), errors.join('; '));
  });

  it('runs forty tasks submitted to the main node to reported, and the main node serves every report, pcap and screenshot', async () => {
    const elf = readFileSync('/bin/true');
    const samples = Array.from({ length: 40 }, (_, n) => {
      if (n % 10 === 3) return { name: `shown${n}.sh`, content: SHOWN(n) };
      if (n % 10 === 7) return { name: `true${n}`, content: elf };
      return { name: `batch${n}.sh`, content: NUMBERED(n) };
    });
    const ids = await Promise.all(samples.map((sample) => submit(sample.name, sample.content)));
    const done = await allEnded(ids, 400_000);
    for (const row of done) assert.equal(row.status, 'reported', `task ${row.id}: ${(await errorsOf(row.id)).join('; ')}`);
    await ranOnce(ids);
    assert.deepEqual(new Set(done.map((row) => row.node)), new Set(['w1', 'w2']), 'both workers took work');

    for (const [n, id] of ids.entries()) {
      const report = await servedByMain(id, samples[n]!.content);
      if (!samples[n]!.name.startsWith('shown')) continue;
      assert.ok(report.screenshots.length >= 1, `task ${id} took screenshots`);
      const shot = await fetch(`${nodes.main!.url}/tasks/screenshots/${id}/0001`);
      assert.equal(shot.status, 200, `screenshot of task ${id}`);
      assert.equal(Buffer.from(await shot.arrayBuffer()).subarray(0, 3).toString('hex'), JPEG_MAGIC);
      const zip = await fetch(`${nodes.main!.url}/tasks/screenshots/${id}`);
      assert.equal(zip.status, 200);
      assert.equal(Buffer.from(await zip.arrayBuffer()).subarray(0, 2).toString(), 'PK');
    }
  });

  it('loses nothing when the main node is killed and started again while tasks are queued and running', async () => {
    // Each sample runs a few seconds, so that some tasks run (or hand their results over) while the
    // main node is down, and others are still queued; each is a different file, fetched from the main node.
    const samples = Array.from({ length: 8 }, (_, n) => `#!/bin/sh\necho restart ${n} > /tmp/restart\nsleep 2\n`);
    const ids = await Promise.all(samples.map((content, n) => submit(`restart${n}.sh`, content)));
    await waitFor('tasks to run on both workers', async () => {
      const running = await db.db.selectFrom('tasks').select('node').where('id', 'in', ids).where('status', '=', 'running').execute();
      return new Set(running.map((row) => row.node)).size === 2 ? true : undefined;
    }, 120_000, 100);
    const port = new URL(nodes.main!.url).port;
    const workers = [nodes.w1!, nodes.w2!];
    const logged = workers.map((worker) => worker.output().length);
    await stopNestbox(nodes.main, 'SIGKILL');
    const queued = await db.db.selectFrom('tasks').select('id').where('id', 'in', ids).where('status', '=', 'pending').execute();
    assert.ok(queued.length > 0, 'tasks were still queued while the main node was down');
    // The main node stays down until a worker has felt it: a sample fetch or a results upload failed and waits to be tried again.
    await waitFor('a worker to retry a transfer', async () => (workers.some((worker, n) => /failed; retrying/.test(worker.output().slice(logged[n]))) ? true : undefined), 60_000, 100);
    nodes.main = await start('main', 'main', [], port);

    const done = await allEnded(ids, 300_000);
    for (const row of done) assert.equal(row.status, 'reported', `task ${row.id}: ${(await errorsOf(row.id)).join('; ')}`);
    await ranOnce(ids);
    for (const [n, id] of ids.entries()) await servedByMain(id, samples[n]!);
  });
});
