import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { openDatabase } from '../../src/db/connect.js';
import type { NewTask } from '../../src/db/schema.js';
import { nowIso } from '../../src/util/time.js';
import { taskRow } from '../helpers/tasks.js';
import { useTestDatabase } from '../helpers/test-database.js';

function newTask(overrides: Partial<NewTask> = {}): NewTask {
  const now = nowIso();
  return taskRow({ target: 'http://example.test/', category: 'url', clock: now, added_on: now, ...overrides });
}

/** The same data-layer behaviour on both supported databases. */
for (const kind of ['sqlite', 'postgres'] as const) {
  describe(`data layer on ${kind}`, () => {
    const db = useTestDatabase(kind, 'nestbox-db-');
    const scope = { node: 'n1', everything: kind === 'sqlite', unassigned: true };

    it('migrates twice without harm and reports its kind', async () => {
      assert.equal(db.handle.kind, kind);
      const again = await openDatabase(db.url, db.home);
      await again.close();
    });

    it('queues pending tasks by priority, then age', async () => {
      const low = await db.stores.tasks.insert(newTask({ priority: 1 }));
      const high = await db.stores.tasks.insert(newTask({ priority: 3 }));
      const mid = await db.stores.tasks.insert(newTask({ priority: 2 }));
      const queue = (await db.stores.tasks.queue(10)).map((task) => task.id);
      assert.deepEqual(queue.slice(0, 3), [high, mid, low]);
    });

    it('lets exactly one of many concurrent claims take a task and a machine', async () => {
      await db.stores.machines.syncFromConfig([
        { name: 'm1', kind: 'linux', platform: 'linux', tags: [], ip: '10.0.0.2', interface: null, snapshot: null, resultserver_ip: '10.0.0.1', resultserver_port: 2042, options: [], settings: {} },
      ], scope);
      const machine = (await db.stores.machines.getByName('m1'))!;
      const id = await db.stores.tasks.insert(newTask());
      const attempts = await Promise.all(
        Array.from({ length: 20 }, () => db.stores.tasks.transition(id, ['pending'], 'running')),
      );
      assert.equal(attempts.filter(Boolean).length, 1);
      const locks = await Promise.all(Array.from({ length: 20 }, () => db.stores.machines.lock(machine.id)));
      assert.equal(locks.filter(Boolean).length, 1);
      await db.stores.machines.unlock(machine.id);
    });

    it('hands each completed task to one processing worker only', async () => {
      const id = await db.stores.tasks.insert(newTask({ status: 'completed', completed_on: nowIso() }));
      const claims = await Promise.all(['a', 'b', 'c', 'd'].map((worker) => db.stores.tasks.claimForProcessing(worker, scope)));
      assert.equal(claims.filter((claim) => claim === id).length, 1);
    });

    it('never reuses the id of a deleted task', async () => {
      const first = await db.stores.tasks.insert(newTask());
      assert.ok(await db.stores.tasks.delete(first));
      const second = await db.stores.tasks.insert(newTask());
      assert.ok(second > first);
    });

    it('de-duplicates samples by sha256 under concurrency', async () => {
      const sample = { file_size: 1, file_type: 'data', md5: 'a'.repeat(32), crc32: '00000000', sha1: 'b'.repeat(40), sha256: 'c'.repeat(64), sha512: 'd'.repeat(128), ssdeep: '3::' };
      const ids = await Promise.all(Array.from({ length: 10 }, () => db.stores.samples.upsert(sample)));
      assert.equal(new Set(ids).size, 1);
    });

    it('rejects an unknown status at the database', async () => {
      await assert.rejects(db.stores.tasks.insert(newTask({ status: 'bogus' as never })));
    });
  });
}
