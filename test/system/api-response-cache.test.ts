import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import pg from 'pg';
import { startTestPostgres, type TestPostgres } from '../helpers/postgres.js';
import { form, startTestServer, type TestServer } from '../helpers/server.js';

/** Cached answers must never be stale: every write, through any path, is seen by the next read. */
describe('response cache', () => {
  let server: TestServer;
  before(async () => {
    server = await startTestServer();
  });
  after(() => server.close());

  const createUrlTask = async () => {
    const { body } = await server.json<{ task_id: number }>('/tasks/create/url', { method: 'POST', body: form({ url: 'http://a.example/' }) });
    return body.task_id;
  };

  it('serves repeated reads the same bytes and sees every change at once', async () => {
    const id = await createUrlTask();
    const first = await (await server.fetch(`/tasks/view/${id}`)).text();
    assert.equal(await (await server.fetch(`/tasks/view/${id}`)).text(), first);

    await server.ctx.stores.tasks.update(id, { status: 'reported' });
    const { body } = await server.json(`/tasks/view/${id}`);
    assert.equal(body.task.status, 'reported');

    const before = (await server.json('/tasks/list')).body.tasks.length;
    await createUrlTask();
    assert.equal((await server.json('/tasks/list')).body.tasks.length, before + 1);

    assert.equal((await server.fetch(`/tasks/delete/${id}`)).status, 200);
    assert.equal((await server.json(`/tasks/view/${id}`)).status, 404);
  });

  it('keeps compact and pretty answers apart', async () => {
    const id = await createUrlTask();
    const pretty = await (await server.fetch(`/tasks/view/${id}`)).text();
    const compact = await (await server.fetch(`/tasks/view/${id}`, { headers: { 'x-requested-with': 'XMLHttpRequest' } })).text();
    assert.notEqual(pretty, compact);
    assert.deepEqual(JSON.parse(pretty), JSON.parse(compact));
    assert.equal(await (await server.fetch(`/tasks/view/${id}`)).text(), pretty);
  });

  it('does not cache errors, and answers cached hits with the same headers', async () => {
    assert.equal((await server.json('/tasks/view/424242')).status, 404);
    const id = await createUrlTask();
    const headersOf = (response: Response) => [...response.headers].filter(([name]) => name !== 'date');
    const fresh = await server.fetch(`/tasks/view/${id}`);
    const hit = await server.fetch(`/tasks/view/${id}`);
    assert.equal(hit.headers.get('content-type'), 'application/json');
    assert.equal(hit.headers.get('x-content-type-options'), 'nosniff');
    assert.deepEqual(headersOf(hit), headersOf(fresh));
    assert.equal(await hit.text(), await fresh.text());
    const compactFresh = await server.fetch(`/v1/tasks/list`, { headers: { 'x-requested-with': 'XMLHttpRequest' } });
    const compactHit = await server.fetch(`/v1/tasks/list`, { headers: { 'x-requested-with': 'XMLHttpRequest' } });
    assert.deepEqual(headersOf(compactHit), headersOf(compactFresh));
    assert.equal(await compactHit.text(), await compactFresh.text());
  });

  it('still asks for the token on a cached URL', async () => {
    const secured = await startTestServer({ api: { token: 'sekrit' } });
    try {
      const ok = await secured.fetch('/tasks/list');
      assert.equal(ok.status, 200);
      assert.equal((await fetch(`${secured.url}/tasks/list`)).status, 401);
    } finally {
      await secured.close();
    }
  });
});

/** On PostgreSQL, other nodes write too: their commits reach this node as notifications. */
describe('response cache on PostgreSQL', () => {
  let database: TestPostgres;
  let server: TestServer;
  /** Another node's connection, writing behind this node's back. */
  let otherNode: pg.Client;
  before(async () => {
    database = startTestPostgres();
    server = await startTestServer({ database: { connection: database.url } });
    otherNode = new pg.Client({ connectionString: database.url });
    await otherNode.connect();
  });
  after(async () => {
    await otherNode?.end();
    await server?.close();
    database?.stop();
  });

  const createUrlTask = async () => {
    const { status, body } = await server.json<{ task_id: number }>('/tasks/create/url', { method: 'POST', body: form({ url: 'http://b.example/' }) });
    assert.equal(status, 200);
    return body.task_id;
  };

  const statusSeen = async (id: number) => (await server.json(`/tasks/view/${id}`)).body.task.status as string;

  /** Waits until the notifications of writes already made have arrived: the token stays the same for a while. */
  const notificationsSettled = async () => {
    for (let last = server.ctx.dataChangeToken(); ; ) {
      await new Promise((resolve) => setTimeout(resolve, 500));
      const now = server.ctx.dataChangeToken();
      if (now === last) return;
      last = now;
    }
  };

  it('caches: an unnotified change stays unseen, the next notified one shows both', async () => {
    const id = await createUrlTask();
    // The create's own notification arrives a moment after its answer and would renew the cache.
    await notificationsSettled();
    assert.equal(await statusSeen(id), 'pending');
    assert.notEqual(server.ctx.dataChangeToken(), undefined);
    // With the trigger off, this write sends no notification, so a cached answer cannot know of it.
    await otherNode.query('ALTER TABLE tasks DISABLE TRIGGER tasks_changed');
    await otherNode.query("UPDATE tasks SET status = 'running' WHERE id = $1", [id]);
    await otherNode.query('ALTER TABLE tasks ENABLE TRIGGER tasks_changed');
    assert.equal(await statusSeen(id), 'pending', 'served from the cache');
    await otherNode.query("UPDATE tasks SET owner = 'other node' WHERE id = $1", [id]);
    const deadline = Date.now() + 5000;
    while ((await statusSeen(id)) !== 'running') {
      assert.ok(Date.now() < deadline, 'the other node\'s write was not seen within 5 s');
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    assert.equal((await server.json(`/tasks/view/${id}`)).body.task.owner, 'other node');
  });

  it("sees this node's own writes at once", async () => {
    const before = (await server.json('/tasks/list')).body.tasks.length;
    const id = await createUrlTask();
    assert.equal((await server.json('/tasks/list')).body.tasks.length, before + 1);
    await server.ctx.stores.tasks.update(id, { status: 'reported' });
    assert.equal(await statusSeen(id), 'reported');
    assert.equal((await server.fetch(`/tasks/delete/${id}`)).status, 200);
    assert.equal((await server.json(`/tasks/view/${id}`)).status, 404);
  });

  it('caches nothing while the listening connection is down, and resumes after reconnecting', async () => {
    const id = await createUrlTask();
    await statusSeen(id);
    await otherNode.query("SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE query = 'LISTEN nestbox_data_changed'");
    const down = Date.now() + 5000;
    while (server.ctx.dataChangeToken() !== undefined) {
      assert.ok(Date.now() < down, 'the lost connection was not noticed');
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
    await otherNode.query('ALTER TABLE tasks DISABLE TRIGGER tasks_changed');
    await otherNode.query("UPDATE tasks SET status = 'running' WHERE id = $1", [id]);
    await otherNode.query('ALTER TABLE tasks ENABLE TRIGGER tasks_changed');
    assert.equal(await statusSeen(id), 'running', 'no cache without a token');
    const up = Date.now() + 10_000;
    while (server.ctx.dataChangeToken() === undefined) {
      assert.ok(Date.now() < up, 'did not listen again');
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    assert.equal(await statusSeen(id), 'running');
  });
});
