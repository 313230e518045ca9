import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { Stores } from '../../src/db/index.js';
import { taskRow } from '../helpers/tasks.js';
import { useTestDatabase } from '../helpers/test-database.js';

/** The distributed API's queries (db/distributed-*.ts) behave alike on both supported databases. */
for (const kind of ['sqlite', 'postgres'] as const) {
  describe(`distributed API queries on ${kind}`, () => {
    const db = useTestDatabase(kind, 'nestbox-db-dist-');

    it('knows the highest task id given out, also after the newest task is deleted', async () => {
      assert.equal(await db.stores.distributedTasks.highestIssuedId(), 0);
      const first = await db.stores.tasks.insert(taskRow());
      const second = await db.stores.tasks.insert(taskRow());
      await db.stores.tasks.delete(second);
      assert.equal(await db.stores.distributedTasks.highestIssuedId(), second);
      await db.stores.tasks.delete(first);
    });

    it('lists by id with status, node, owner, priority, offset and limit', async () => {
      const free = await db.stores.tasks.insert(taskRow({ owner: 'a', priority: 2 }));
      const pinned = await db.stores.tasks.insert({ ...taskRow({ owner: 'a' }), node: 'n1' });
      const done = await db.stores.tasks.insert(taskRow({ status: 'reported', owner: 'b' }));
      const ids = async (filter: Parameters<Stores['distributedTasks']['list']>[0]) => (await db.stores.distributedTasks.list(filter)).map((task) => task.id);
      assert.deepEqual(await ids({}), [free, pinned, done]);
      assert.deepEqual(await ids({ statuses: ['pending'], onNode: false }), [free]);
      assert.deepEqual(await ids({ statuses: ['pending'], onNode: true }), [pinned]);
      assert.deepEqual(await ids({ statuses: [] }), []);
      assert.deepEqual(await ids({ owner: 'a', priority: 2 }), [free]);
      assert.deepEqual(await ids({ offset: 1 }), [pinned, done]);
      assert.deepEqual(await ids({ offset: 1, limit: 1 }), [pinned]);
      assert.deepEqual((await db.stores.distributedTasks.onNodes('pending', ['n1'])).map((task) => task.id), [pinned]);
      for (const id of [free, pinned, done]) await db.stores.tasks.delete(id);
    });

    it('queues for a node only the tasks no node is pinned to and those pinned to it', async () => {
      const free = await db.stores.tasks.insert(taskRow());
      const mine = await db.stores.tasks.insert({ ...taskRow({ priority: 2 }), node: 'me' });
      const theirs = await db.stores.tasks.insert({ ...taskRow({ priority: 3 }), node: 'them' });
      assert.deepEqual((await db.stores.tasks.queue(10, 'me')).map((task) => task.id), [mine, free]);
      assert.deepEqual((await db.stores.tasks.queue(10)).map((task) => task.id), [theirs, mine, free]);
      for (const id of [free, mine, theirs]) await db.stores.tasks.delete(id);
    });

    it('counts tasks by status, priority and day', async () => {
      await db.stores.tasks.insert(taskRow({ added_on: '2020-01-01T00:00:00.000Z' }));
      await db.stores.tasks.insert(taskRow({ added_on: '2030-01-01T00:00:00.000Z', priority: 2 }));
      await db.stores.tasks.insert(taskRow({ added_on: '2030-01-01T00:00:00.000Z', priority: 2 }));
      const counts = await db.stores.distributedTasks.counts('2025-01-01T00:00:00.000Z');
      const sorted = counts.map((row) => [row.status, row.priority, row.today, row.count]).sort((a, b) => Number(a[1]) - Number(b[1]));
      assert.deepEqual(sorted, [['pending', 1, false, 1], ['pending', 2, true, 2]]);
    });

    it('adds, renames (with its tasks) and disables a remote node, never listing main nodes', async () => {
      const machines = [{ name: 'm', platform: 'linux', tags: ['x'] }];
      await db.stores.distributedNodes.addRemote({ name: 'r1', url: 'http://127.0.0.1:1/', token: 't', mode: 'normal', machines });
      await db.handle.db.insertInto('nodes').values({ name: 'boss', role: 'main' }).execute();
      const task = await db.stores.tasks.insert({ ...taskRow(), node: 'r1' });
      await db.stores.distributedNodes.rename('r1', 'r2');
      assert.equal((await db.stores.tasks.get(task))!.node, 'r2');
      assert.ok(await db.stores.distributedNodes.update('r2', { enabled: 0 }));
      assert.deepEqual((await db.stores.distributedNodes.list()).map((node) => [node.name, node.enabled, node.token]), [['r2', 0, 't']]);
      assert.equal(await db.stores.distributedNodes.get('boss'), undefined);
      assert.ok(await db.stores.distributedNodes.nameTaken('boss'));
      assert.equal(await db.stores.distributedNodes.update('boss', { enabled: 0 }), false);
    });
  });
}
