import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { form, startTestServer, type TestServer } from './helpers/server.js';

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
    await server.fetch(`/tasks/view/${id}`);
    const hit = await server.fetch(`/tasks/view/${id}`);
    assert.equal(hit.headers.get('content-type'), 'application/json');
    assert.equal(hit.headers.get('x-content-type-options'), 'nosniff');
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
