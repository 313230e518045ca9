import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { after, before, describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { Migrator, sql } from 'kysely';
import { migrationProvider } from '../../src/db/migrations/index.js';
import type { NewTask } from '../../src/db/schema.js';
import { triageQueue } from '../../src/scheduler/queue-triage.js';
import { machineOf } from '../helpers/cluster-rows.js';
import { startTestPostgres, type TestPostgres } from '../helpers/postgres.js';
import { form, startTestServer, type TestServer } from '../helpers/server.js';
import { taskRow } from '../helpers/tasks.js';
import { windowsSample } from '../helpers/windows-samples.js';
import { zipSample } from '../helpers/zip-sample.js';

/**
 * Tasks asking for platform windows: with no Windows machine they reach Wine on the linux machine (intake,
 * queue triage, the claim); once the cluster has a Windows machine they are its alone. On SQLite and on
 * PostgreSQL (whose claim is the function nestbox_claim_task).
 */
const SCRIPT = '#!/bin/sh\necho hello\n';

for (const kind of ['sqlite', 'postgres'] as const) {
  describe(`platform windows on the linux machine (${kind})`, { timeout: 180_000 }, () => {
    let pg: TestPostgres | undefined;
    let server: TestServer;
    const pe = () => readFileSync(windowsSample('mutex', 64));

    before(async () => {
      if (kind === 'postgres') pg = startTestPostgres();
      server = await startTestServer({ ...(pg ? { database: { connection: pg.url } } : {}), machines: [{ name: 'linux1', tags: ['x64'] }] });
    });
    after(async () => {
      await server?.close();
      pg?.stop();
    });

    const upload = (fields: Record<string, string>, name: string, content: string | Uint8Array) =>
      server.json('/tasks/create/file', { method: 'POST', body: form(fields, [['file', name, content]]) });
    const taskOf = async (id: number) => (await server.ctx.stores.tasks.get(id))!;
    const insertTask = (overrides: Partial<NewTask>) => server.ctx.stores.tasks.insert(taskRow({ added_on: new Date().toISOString(), ...overrides }));
    const claim = () =>
      server.ctx.stores.tasks.claimNext({ node: server.ctx.node.node, unassignedMachines: server.ctx.node.unassigned, busyMachineIds: [], managers: new Map([['linux', 'linux']]) });
    /** Ends a claimed task and frees its machine, as the scheduler would after the run. */
    const release = async (taskId: number, machineId: number) => {
      await server.ctx.stores.tasks.finishRun(taskId, server.ctx.node.node, 'completed', { completed_on: new Date().toISOString() });
      await server.ctx.stores.machines.unlock(machineId);
    };
    /** Tasks left pending by one test do not reach the next. */
    const clearQueue = () => server.db.updateTable('tasks').set({ status: 'failed_analysis' }).where('status', '=', 'pending').execute();

    it('intake takes a PE with platform windows, and says why a script or a URL cannot run so', async () => {
      const accepted = await upload({ platform: 'windows' }, 'mutex.exe', pe());
      assert.equal(accepted.status, 200, JSON.stringify(accepted.body));
      assert.equal((await taskOf(accepted.body.task_id)).platform, 'windows');
      const withTags = await upload({ platform: 'windows', tags: 'x64' }, 'mutex.exe', pe());
      assert.equal(withTags.status, 200, JSON.stringify(withTags.body));

      const script = await upload({ platform: 'windows' }, 'run.sh', SCRIPT);
      assert.equal(script.status, 400);
      assert.match(script.body.message, /^run\.sh cannot run as platform "windows": no Windows machine is configured, so platform "windows" runs Windows programs \(PE files, EXE or DLL\) under Wine on the linux machines, and it is none \(POSIX shell script/);
      const asked = await upload({ platform: 'windows', package: 'sh' }, 'mutex.exe', pe());
      assert.equal(asked.status, 400);
      assert.match(asked.body.message, /and the package "sh" asked for runs none$/);
      const url = await server.json('/tasks/create/url', { method: 'POST', body: form({ url: 'http://example.test/', platform: 'windows' }) });
      assert.equal(url.status, 400);
      assert.match(url.body.message, /^A URL task cannot run as platform "windows"/);
      const tagless = await upload({ platform: 'windows', tags: 'gpu' }, 'mutex.exe', pe());
      assert.equal(tagless.status, 400);
      assert.match(tagless.body.message, /^No configured machine has platform "windows" and all of the tags "gpu"/);
      await clearQueue();
    });

    it("a submission's archive gives a task for its PE and an error for its script", async () => {
      const zip = await zipSample([['mutex.exe', pe()], ['run.sh', SCRIPT]]);
      const { status, body } = await server.json('/tasks/create/submit', { method: 'POST', body: form({ platform: 'windows' }, [['files', 'both.zip', zip]]) });
      assert.equal(status, 200, JSON.stringify(body));
      assert.equal(body.task_ids.length, 1);
      assert.match((await taskOf(body.task_ids[0])).target, /\/mutex\.exe$/);
      assert.equal(body.errors.length, 1);
      assert.match(body.errors[0], /^run\.sh cannot run as platform "windows"/);
      await clearQueue();
    });

    it('triage keeps a platform windows task for the linux machine, and fails one whose tags it lacks at once', async () => {
      const runnable = await insertTask({ platform: 'windows', tags: '["x64"]' });
      const unrunnable = await insertTask({ platform: 'windows', tags: '["gpu"]' });
      const kept = await triageQueue(server.ctx);
      assert.deepEqual(kept.map((task) => task.id).filter((id) => id === runnable || id === unrunnable), [runnable]);
      assert.equal((await taskOf(runnable)).status, 'pending');
      assert.equal((await taskOf(unrunnable)).status, 'failed_analysis');
      const errors = await server.db.selectFrom('errors').select('message').where('task_id', '=', unrunnable).execute();
      assert.deepEqual(errors.map((error) => error.message), ['No configured machine matches platform "windows" and tags "gpu"']);
      await clearQueue();
    });

    if (kind === 'postgres') {
      it("nestbox_claim_task gives a platform windows task to the linux machine", async () => {
        const id = await insertTask({ platform: 'windows' });
        const claimed = await claim();
        assert.ok(claimed, 'a claim');
        assert.equal(claimed.task.id, id);
        assert.equal(claimed.machine.name, 'linux1');
        await release(id, claimed.machine.id);
      });
    }

    describe('once the cluster has a Windows machine', () => {
      before(async () => {
        await server.db.insertInto('machines').values({ ...machineOf('winbox', 'win7'), kind: 'qemu', platform: 'windows' }).execute();
      });

      it('intake takes platform windows for any file (the Windows machine runs it), and /machines/list shows each machine as configured', async () => {
        const script = await upload({ platform: 'windows' }, 'run.sh', SCRIPT);
        assert.equal(script.status, 200, JSON.stringify(script.body));
        const { body } = await server.json('/machines/list');
        assert.deepEqual(body.machines.map((machine: any) => [machine.name, machine.platform]).sort(), [['linux1', 'linux'], ['win7', 'windows']]);
        await clearQueue();
      });

      if (kind === 'postgres') {
        it('nestbox_claim_task leaves platform windows to it, and still gives a task of no platform to the linux machine', async () => {
          const windows = await insertTask({ platform: 'windows' });
          const any = await insertTask({});
          const claimed = await claim();
          assert.ok(claimed, 'a claim');
          assert.equal(claimed.task.id, any);
          assert.equal(claimed.machine.name, 'linux1');
          await release(any, claimed.machine.id);
          assert.equal(await claim(), undefined);
          assert.equal((await taskOf(windows)).status, 'pending');
          await clearQueue();
        });

        it("triage has the platform windows task wait for the Windows machine's node", async () => {
          const id = await insertTask({ platform: 'windows' });
          assert.deepEqual((await triageQueue(server.ctx)).map((task) => task.id), []);
          assert.equal((await taskOf(id)).status, 'pending');
          const errors = await server.db.selectFrom('errors').select('message').where('task_id', '=', id).execute();
          assert.deepEqual(errors.map((error) => error.message), [
            'waiting: the only machines that fit (platform "windows") are on node winbox, which is down since an unknown time',
          ]);
          await clearQueue();
        });

        it("migration 0008 goes down to 0007's claim function and up again", async () => {
          const definition = async () =>
            (await sql<{ text: string }>`select pg_get_functiondef('nestbox_claim_task'::regproc) as text`.execute(server.db)).rows[0]!.text;
          const migrator = new Migrator({ db: server.db, provider: migrationProvider });
          assert.equal((await migrator.migrateDown()).error, undefined);
          assert.doesNotMatch(await definition(), /windows/);
          assert.equal((await migrator.migrateToLatest()).error, undefined);
          assert.match(await definition(), /t\.platform = 'windows' and f\.kind = 'linux'/);
        });
      }
    });
  });
}

describe("platform windows with a Windows machine, in the SQLite scheduler's own claim", { timeout: 120_000 }, () => {
  let server: TestServer;
  before(async () => {
    server = await startTestServer({ machines: [{ name: 'linux1' }] }, { engine: true, pollMs: 100 });
    await server.db.insertInto('machines').values({ ...machineOf('', 'win7'), kind: 'qemu', platform: 'windows' }).execute();
  });
  after(() => server?.close());

  it('picks the Windows machine, not the linux one (this node runs no qemu machines, so the task fails naming it)', async () => {
    const { status, body } = await server.json('/tasks/create/file', {
      method: 'POST',
      body: form({ platform: 'windows', timeout: '5' }, [['file', 'mutex.exe', readFileSync(windowsSample('mutex', 64))]]),
    });
    assert.equal(status, 200, JSON.stringify(body));
    let view: any;
    for (let i = 0; i < 100; i++) {
      view = (await server.json(`/tasks/view/${body.task_id}`)).body.task;
      if (view.status !== 'pending') break;
      await sleep(100);
    }
    assert.equal(view.status, 'failed_analysis');
    assert.deepEqual(view.errors, ['Machine win7 is of kind "qemu", which this node cannot run']);
  });
});
