import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { type DatabaseHandle, openDatabase } from '../../src/db/connect.js';
import { createStores, type Stores } from '../../src/db/index.js';
import type { NewTask } from '../../src/db/schema.js';
import { nowIso } from '../../src/util/time.js';
import { startTestPostgres, type TestPostgres } from '../helpers/postgres.js';
import { taskRow } from '../helpers/tasks.js';

function newTask(overrides: Partial<NewTask> = {}): NewTask {
  const now = nowIso();
  return taskRow({ target: 'http://example.test/', category: 'url', clock: now, added_on: now, ...overrides });
}

/** The same data-layer behaviour on both supported databases. */
for (const kind of ['sqlite', 'postgres'] as const) {
  describe(`data layer on ${kind}`, () => {
    let pg: TestPostgres | undefined;
    let home: string;
    let handle: DatabaseHandle;
    let stores: Stores;
    const scope = { node: 'n1', everything: kind === 'sqlite', unassigned: true };

    before(async () => {
      home = mkdtempSync(join(tmpdir(), 'nestbox-db-'));
      if (kind === 'postgres') pg = startTestPostgres();
      handle = await openDatabase(pg?.url ?? '', home);
      stores = createStores(handle.db);
    });
    after(async () => {
      await handle.close();
      pg?.stop();
      rmSync(home, { recursive: true, force: true });
    });

    it('migrates twice without harm and reports its kind', async () => {
      assert.equal(handle.kind, kind);
      const again = await openDatabase(pg?.url ?? '', home);
      await again.close();
    });

    it('queues pending tasks by priority, then age', async () => {
      const low = await stores.tasks.insert(newTask({ priority: 1 }));
      const high = await stores.tasks.insert(newTask({ priority: 3 }));
      const mid = await stores.tasks.insert(newTask({ priority: 2 }));
      const queue = (await stores.tasks.queue(10)).map((task) => task.id);
      assert.deepEqual(queue.slice(0, 3), [high, mid, low]);
    });

    it('lets exactly one of many concurrent claims take a task and a machine', async () => {
      await stores.machines.syncFromConfig([
        { name: 'm1', kind: 'linux', platform: 'linux', tags: [], ip: '10.0.0.2', interface: null, snapshot: null, resultserver_ip: '10.0.0.1', resultserver_port: 2042, options: [], settings: {} },
      ], scope);
      const machine = (await stores.machines.getByName('m1'))!;
      const id = await stores.tasks.insert(newTask());
      const attempts = await Promise.all(
        Array.from({ length: 20 }, () => stores.tasks.transition(id, ['pending'], 'running')),
      );
      assert.equal(attempts.filter(Boolean).length, 1);
      const locks = await Promise.all(Array.from({ length: 20 }, () => stores.machines.lock(machine.id)));
      assert.equal(locks.filter(Boolean).length, 1);
      await stores.machines.unlock(machine.id);
    });

    it('hands each completed task to one processing worker only', async () => {
      const id = await stores.tasks.insert(newTask({ status: 'completed', completed_on: nowIso() }));
      const claims = await Promise.all(['a', 'b', 'c', 'd'].map((worker) => stores.tasks.claimForProcessing(worker, scope)));
      assert.equal(claims.filter((claim) => claim === id).length, 1);
    });

    it('never reuses the id of a deleted task', async () => {
      const first = await stores.tasks.insert(newTask());
      assert.ok(await stores.tasks.delete(first));
      const second = await stores.tasks.insert(newTask());
      assert.ok(second > first);
    });

    it('de-duplicates samples by sha256 under concurrency', async () => {
      const sample = { file_size: 1, file_type: 'data', md5: 'a'.repeat(32), crc32: '00000000', sha1: 'b'.repeat(40), sha256: 'c'.repeat(64), sha512: 'd'.repeat(128), ssdeep: '3::' };
      const ids = await Promise.all(Array.from({ length: 10 }, () => stores.samples.upsert(sample)));
      assert.equal(new Set(ids).size, 1);
    });

    it('rejects an unknown status at the database', async () => {
      await assert.rejects(stores.tasks.insert(newTask({ status: 'bogus' as never })));
    });
  });
}
