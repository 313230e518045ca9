import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { pino } from 'pino';
import { hostname } from 'node:os';
import { createContext } from '../../src/app.js';
import { defaultMachineName, nodeName } from '../../src/cluster/node-identity.js';
import { validateConfig } from '../../src/config/load.js';
import { ChangeListener } from '../../src/db/change-listener.js';
import { type DatabaseHandle, openDatabase } from '../../src/db/connect.js';
import { createStores, type Stores } from '../../src/db/index.js';
import { TASK_PENDING_CHANNEL } from '../../src/db/migrations/0007-task-claims.js';
import type { MachineRow, NewTask, TaskRow } from '../../src/db/schema.js';
import { machineMatcher, wishOf } from '../../src/scheduler/matching.js';
import { triageQueue } from '../../src/scheduler/queue-triage.js';
import { Scheduler } from '../../src/scheduler/scheduler.js';
import { nowIso } from '../../src/util/time.js';
import { startNestbox } from '../helpers/nestbox-process.js';
import { startTestPostgres, type TestPostgres } from '../helpers/postgres.js';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { taskRow } from '../helpers/tasks.js';

function newTask(overrides: Partial<NewTask> = {}): NewTask {
  const now = nowIso();
  return taskRow({ target: 'http://example.test/', category: 'url', clock: now, added_on: now, ...overrides });
}

const LEASE_SECONDS = 1;

/** A node of the cluster in this process: its own home, the shared PostgreSQL, no engine unless asked. */
function startNode(pg: TestPostgres, name: string, machines: Array<{ name: string; tags?: string[] }>, role: 'all' | 'main' | 'worker' = 'worker') {
  return startTestServer({
    database: { connection: pg.url },
    cluster: { role, node_name: name, heartbeat_seconds: 0.2, lease_seconds: LEASE_SECONDS },
    machines,
  });
}

describe('cluster nodes on one PostgreSQL', { timeout: 120_000 }, () => {
  let pg: TestPostgres;
  let a: TestServer;
  let b: TestServer;

  before(async () => {
    pg = startTestPostgres();
    a = await startNode(pg, 'a', [{ name: 'a-linux1' }]);
    b = await startNode(pg, 'b', [{ name: 'b-linux1', tags: ['b-only'] }]);
  });
  after(async () => {
    await a?.close();
    await b?.close();
    pg?.stop();
  });

  const machine = async (name: string) => (await a.db.selectFrom('machines').selectAll().where('name', '=', name).executeTakeFirst())!;
  const task = async (id: number) => (await a.db.selectFrom('tasks').selectAll().where('id', '=', id).executeTakeFirst())!;
  const errorsOf = async (id: number) => (await a.db.selectFrom('errors').selectAll().where('task_id', '=', id).orderBy('id').execute());

  /** A task some node runs on a machine, as a claim leaves it: running, machine locked, guest up. */
  async function runningOn(node: string, machineName: string): Promise<number> {
    const id = await a.ctx.stores.tasks.insert(newTask({ status: 'running', node, started_on: nowIso() }));
    await a.db.updateTable('machines').set({ locked: 1 }).where('name', '=', machineName).execute();
    await a.db.insertInto('guests').values({ task_id: id, name: machineName, label: machineName, manager: 'linux', status: 'running', started_on: nowIso() }).execute();
    return id;
  }
  const guestStatus = async (id: number) => (await a.db.selectFrom('guests').select('status').where('task_id', '=', id).executeTakeFirst())!.status;

  it('registers each node with its role, version, address and lease, and its machines under its name', async () => {
    await a.service.node.setUrl(a.url);
    const row = (await a.db.selectFrom('nodes').selectAll().where('name', '=', 'a').executeTakeFirst())!;
    assert.equal(row.role, 'worker');
    assert.equal(row.url, a.url);
    assert.match(row.version, /^\d+\.\d+\.\d+/);
    assert.ok(row.lease_expires_on! > nowIso(), 'the lease lies ahead');
    const heartbeat = row.heartbeat_on!;
    await a.service.node.beat();
    const renewed = (await a.db.selectFrom('nodes').selectAll().where('name', '=', 'a').executeTakeFirst())!;
    assert.ok(renewed.heartbeat_on! > heartbeat, 'a heartbeat renews it');
    assert.equal((await machine('a-linux1')).node, 'a');
    assert.equal((await machine('b-linux1')).node, 'b');
    // b started after a: a's machine is still enabled (b disabled only its own).
    assert.equal((await machine('a-linux1')).enabled, 1);
    assert.equal((await machine('b-linux1')).enabled, 1);
  });

  it("refuses to start a node configured with a machine name another node runs", async () => {
    await assert.rejects(startNode(pg, 'c', [{ name: 'a-linux1' }]), /another node already runs "a-linux1" \(node a\)/);
    assert.equal((await machine('a-linux1')).node, 'a');
  });

  it("a node's recover() requeues its own running tasks only", async () => {
    const mine = await runningOn('a', 'a-linux1');
    const theirs = await runningOn('b', 'b-linux1');
    const scheduler = new Scheduler(a.ctx, { machineryFor: () => { throw new Error('no machines run in this test'); } });
    await scheduler.recover();
    assert.equal((await task(mine)).status, 'pending');
    assert.equal((await task(mine)).node, null);
    assert.ok((await errorsOf(mine)).some((e) => e.action === 'recovered' && /restart of nestbox/.test(e.message)));
    assert.equal((await machine('a-linux1')).locked, 0);
    assert.equal(await guestStatus(mine), 'stopped');
    assert.equal((await task(theirs)).status, 'running');
    assert.equal((await task(theirs)).node, 'b');
    assert.equal((await machine('b-linux1')).locked, 1);
    assert.equal(await guestStatus(theirs), 'running');
    assert.deepEqual(await errorsOf(theirs), []);
    // Node b is alive: a's heartbeat leaves its work alone too.
    await a.service.node.beat();
    assert.equal((await task(theirs)).status, 'running');
    await a.db.updateTable('tasks').set({ status: 'failed_analysis' }).where('id', 'in', [mine, theirs]).execute();
    await a.db.updateTable('machines').set({ locked: 0 }).execute();
  });

  it("requeues a dead node's tasks once its lease expires, frees its machines and stops its guests, with the reason", async () => {
    const dead = await startNode(pg, 'dead', [{ name: 'dead-linux1' }]);
    // The node dies without a word: its heartbeat stops and its lease is left to run out.
    clearInterval((dead.service.node as unknown as { timer: NodeJS.Timeout }).timer);
    const orphan = await runningOn('dead', 'dead-linux1');
    await a.service.node.beat();
    assert.equal((await task(orphan)).status, 'running', 'the lease still holds');
    await new Promise((resolve) => setTimeout(resolve, LEASE_SECONDS * 1000 + 200));
    await a.service.node.beat();
    const requeued = await task(orphan);
    assert.equal(requeued.status, 'pending');
    assert.equal(requeued.node, null);
    const errors = await errorsOf(orphan);
    assert.equal(errors.length, 1);
    assert.equal(errors[0]!.action, 'recovered');
    assert.match(errors[0]!.message, /lease of node dead expired/);
    assert.equal((await machine('dead-linux1')).locked, 0);
    assert.equal(await guestStatus(orphan), 'stopped');
    await a.db.updateTable('tasks').set({ status: 'failed_analysis' }).where('id', '=', orphan).execute();
    await dead.close();
  });

  it('requeues each task of an expired lease once when several nodes recover at once', async () => {
    const expired = new Date(Date.now() - 60_000).toISOString();
    // Nodes a and b heartbeat meanwhile, and recover expired leases too: they race with the four below.
    const ids = await a.db.transaction().execute(async (trx) => {
      await trx.insertInto('nodes').values({ name: 'gone', role: 'worker', lease_expires_on: expired }).execute();
      await trx.insertInto('machines').values({ name: 'gone-linux1', label: 'gone-linux1', kind: 'linux', ip: '', platform: 'linux', tags: '[]', options: '[]', interface: null, snapshot: null, resultserver_ip: '', resultserver_port: 0, enabled: 1, node: 'gone' }).execute();
      const rows = await trx.insertInto('tasks').values(Array.from({ length: 20 }, () => newTask({ status: 'running', node: 'gone', started_on: expired }))).returning('id').execute();
      return rows.map((row) => row.id);
    });
    const handles: DatabaseHandle[] = await Promise.all(Array.from({ length: 4 }, () => openDatabase(pg.url, a.home)));
    try {
      const results = await Promise.all(handles.map((handle, i) => createStores(handle.db).nodes.recoverExpired(`recoverer${i}`, nowIso())));
      const requeued = results.flat().flatMap((lease) => lease.taskIds);
      assert.equal(new Set(requeued).size, requeued.length, 'no task requeued twice');
      assert.ok(requeued.every((id) => ids.includes(id)));
    } finally {
      await Promise.all(handles.map((handle) => handle.close()));
    }
    for (const id of ids) {
      assert.equal((await task(id)).status, 'pending');
      assert.equal((await errorsOf(id)).filter((e) => e.action === 'recovered').length, 1);
    }
    await a.db.updateTable('tasks').set({ status: 'failed_analysis' }).where('id', 'in', ids).execute();
    await a.db.updateTable('machines').set({ enabled: 0 }).where('name', '=', 'gone-linux1').execute();
  });

  it('fails a task no machine of the cluster fits, and has one whose only machines are on a down node wait, saying so once however many nodes notice', async () => {
    const expired = new Date(Date.now() - 60_000).toISOString();
    await a.db.insertInto('nodes').values({ name: 'down', role: 'worker', lease_expires_on: expired }).execute();
    await a.db.insertInto('machines').values({ name: 'down-linux1', label: 'down-linux1', kind: 'linux', ip: '', platform: 'linux', tags: '["down-only"]', options: '[]', interface: null, snapshot: null, resultserver_ip: '', resultserver_port: 0, enabled: 1, node: 'down' }).execute();
    const waiting = await a.ctx.stores.tasks.insert(newTask({ tags: '["down-only"]', priority: 3 }));
    const hopeless = await a.ctx.stores.tasks.insert(newTask({ tags: '["nowhere"]', priority: 3 }));
    // Several nodes notice at once.
    await Promise.all([a, b, a, b].map((node) => triageQueue(node.ctx)));
    assert.equal((await task(hopeless)).status, 'failed_analysis');
    assert.match((await errorsOf(hopeless))[0]!.message, /No configured machine matches tags "nowhere"/);
    assert.equal((await task(waiting)).status, 'pending');
    const notes = await errorsOf(waiting);
    assert.equal(notes.length, 1);
    assert.equal(notes[0]!.message, `waiting: the only machines that fit (tags "down-only") are on node down, which is down since ${expired}`);
    await a.db.updateTable('tasks').set({ status: 'failed_analysis' }).where('id', '=', waiting).execute();
  });

  it('a main node, which runs no engine, fails unrunnable tasks on its heartbeat', async () => {
    const main = await startNode(pg, 'm', [], 'main');
    try {
      assert.equal(main.service.scheduler, undefined);
      const id = await a.ctx.stores.tasks.insert(newTask({ platform: 'plan9' }));
      await main.service.node.beat();
      assert.equal((await task(id)).status, 'failed_analysis');
      assert.match((await errorsOf(id))[0]!.message, /No configured machine matches platform "plan9"/);
    } finally {
      await main.close();
    }
  });

  it('claims every task exactly once with several nodes racing, each task on a machine that fits it', async () => {
    const ids: number[] = [];
    for (let i = 0; i < 60; i++) ids.push(await a.ctx.stores.tasks.insert(newTask({ priority: 1 + (i % 3), tags: i % 4 === 0 ? '["b-only"]' : '[]' })));
    const claimers: Array<{ node: string; stores: Stores; handle: DatabaseHandle }> = [];
    for (const node of ['a', 'b', 'a', 'b']) {
      const handle = await openDatabase(pg.url, a.home);
      claimers.push({ node, handle, stores: createStores(handle.db) });
    }
    const claims: Array<{ node: string; task: TaskRow; machine: MachineRow }> = [];
    try {
      await Promise.all(claimers.map(async ({ node, stores }) => {
        for (;;) {
          const claim = await stores.tasks.claimNext({
            node,
            unassignedMachines: false,
            busyMachineIds: [],
            managers: new Map([['linux', 'linux']]),
          });
          if (!claim) {
            // Nothing free that fits: done when no pending task this node's machine could run is left.
            const left = await stores.tasks.queue(100, node);
            const ownMachine = node === 'a' ? 'a-linux1' : 'b-linux1';
            const cluster = await stores.machines.list();
            const fits = machineMatcher(cluster);
            const mine = cluster.find((m) => m.name === ownMachine)!;
            if (!left.some((t) => fits(mine, wishOf(t)))) return;
            await new Promise((resolve) => setTimeout(resolve, 2));
            continue;
          }
          claims.push({ node, task: claim.task, machine: claim.machine });
          await stores.tasks.finishRun(claim.task.id, node, 'completed', { completed_on: nowIso() });
          await stores.machines.unlock(claim.machine.id);
        }
      }));
    } finally {
      await Promise.all(claimers.map(({ handle }) => handle.close()));
    }
    const claimed = claims.map((claim) => claim.task.id).sort((x, y) => x - y);
    assert.deepEqual(claimed, ids, 'every task claimed exactly once');
    for (const claim of claims) {
      assert.equal(claim.machine.node, claim.node, 'a node claims on its own machines');
      if (claim.task.tags.includes('b-only')) assert.equal(claim.node, 'b', `task ${claim.task.id} needs b's tag`);
    }
    assert.ok(claims.some((claim) => claim.node === 'a') && claims.some((claim) => claim.node === 'b'), 'both nodes took work');
  });

  it('notifies listeners as soon as a task becomes pending', async () => {
    let heard = 0;
    const listener = new ChangeListener(pg.url, TASK_PENDING_CHANNEL, () => heard++);
    await listener.start();
    try {
      const before = heard;
      const started = performance.now();
      await a.ctx.stores.tasks.insert(newTask({ status: 'failed_analysis' }));
      await new Promise((resolve) => setTimeout(resolve, 200));
      assert.equal(heard, before, 'a task that is not pending wakes nobody');
      await a.ctx.stores.tasks.insert(newTask({ tags: '["nowhere-at-all"]' }));
      while (heard === before && performance.now() - started < 5000) await new Promise((resolve) => setTimeout(resolve, 1));
      assert.equal(heard, before + 1);
    } finally {
      await listener.close();
    }
  });
});

describe('cluster roles', () => {
  it('refuses role main or worker on SQLite: a cluster needs PostgreSQL', async () => {
    const home = mkdtempSync(join(tmpdir(), 'nestbox-role-'));
    try {
      for (const role of ['main', 'worker'] as const) {
        const config = validateConfig({ cluster: { role }, paths: { storage: join(home, 'storage'), tmppath: join(home, 'tmp') } });
        await assert.rejects(createContext({ config, home, log: pino({ level: 'silent' }) }), /cluster role "\w+" needs a PostgreSQL database/);
      }
    } finally {
      rmSync(home, { recursive: true, force: true });
    }
  });

  it('`nestbox start --role worker` on SQLite exits with the reason', async () => {
    const home = mkdtempSync(join(tmpdir(), 'nestbox-role-'));
    try {
      await assert.rejects(startNestbox(home, {}, ['--role', 'worker']), /exited with 1:[^]*\nnestbox: cluster role "worker" needs a PostgreSQL database/);
      await assert.rejects(startNestbox(home, {}, ['--role', 'boss']), /invalid role "boss": all, main or worker/);
    } finally {
      rmSync(home, { recursive: true, force: true });
    }
  });
});

describe('node identity', () => {
  it("names the node from cluster.node_name, else the host's name", () => {
    assert.equal(nodeName(validateConfig({ cluster: { node_name: 'w7' } })), 'w7');
    assert.equal(nodeName(validateConfig({})), hostname());
  });

  it('qualifies default machine names with the node name when one is configured', () => {
    assert.equal(defaultMachineName('', 1), 'linux1');
    assert.equal(defaultMachineName('w7', 2), 'w7-linux2');
    const machines = validateConfig({ cluster: { node_name: 'w7' }, machines_auto: { count: 2 } }).machines.map((machine) => machine.name);
    assert.deepEqual(machines, ['w7-linux1', 'w7-linux2'], 'the default machines carry the node name');
  });
});
