import assert from 'node:assert/strict';
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { after, before, describe, it } from 'node:test';
import type { NewTask } from '../../src/db/schema.js';
import type { TaskListRow as Row } from '../../src/web/task-list-row.js';
import { startTestPostgres, type TestPostgres } from '../helpers/postgres.js';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { taskRow } from '../helpers/tasks.js';

interface Page {
  tasks: Row[];
  total: number;
  page: number;
  pageSize: number;
}

/**
 * The web interface's task list and bulk actions over HTTP, on tasks stored with known fields. The list
 * is one query: it is run on both databases, which differ in LIKE, NULL ordering and number types.
 */
for (const database of ['sqlite', 'postgres'] as const) describe(`web task list (${database})`, () => {
  let server: TestServer;
  let postgres: TestPostgres | undefined;
  const ids: Record<string, number> = {};

  const insert = async (name: string, fields: Partial<NewTask>) => {
    ids[name] = await server.ctx.stores.tasks.insert(taskRow(fields));
  };
  const list = async (query: string) => {
    const answer = await server.json<Page>(`/ui/api/tasks?${query}`);
    assert.equal(answer.status, 200, JSON.stringify(answer.body));
    return answer.body;
  };
  const idsOf = (page: Page) => page.tasks.map((task) => task.id);

  before(async () => {
    postgres = database === 'postgres' ? startTestPostgres() : undefined;
    server = await startTestServer(postgres ? { database: { connection: postgres.url } } : {});
    await insert('low', { status: 'reported', score: 1.5, category: 'url', target: 'http://low.example/', package: 'ie', owner: 'alice', tags: '["x86","office"]', added_on: '2026-01-01T10:00:00.000Z', completed_on: '2026-01-01T11:00:00.000Z' });
    await insert('high', { status: 'reported', score: 8, target: '/srv/tmp/abc/invoice.exe', package: 'exe', owner: 'bob', tags: '["x64"]', added_on: '2026-01-02T10:00:00.000Z', completed_on: '2026-01-02T10:30:00.000Z' });
    await insert('pending', { status: 'pending', category: 'url', target: 'http://pending.example/', machine: 'win7', tags: '["50%_off"]', added_on: '2026-01-03T10:00:00.000Z' });
    await insert('failed', { status: 'failed_analysis', target: '/srv/tmp/def/run.sh', package: 'bash', owner: 'alice', added_on: '2026-01-04T10:00:00.000Z', completed_on: '2026-01-04T10:05:00.000Z' });
    const ran = await server.ctx.stores.guests.create(ids.high!, { name: 'linux1', label: 'linux1' }, 'linux');
    await server.ctx.stores.guests.setStatus(ran, 'stopped');
  });
  after(async () => {
    await server?.close();
    postgres?.stop();
  });

  it('lists every task, newest first by default, with the row fields of the contract', async () => {
    const page = await list('');
    assert.equal(page.total, 4);
    assert.deepEqual(idsOf(page), [ids.failed, ids.pending, ids.high, ids.low]);
    assert.equal(page.page, 1);
    assert.equal(page.pageSize, 50);
    const high = page.tasks.find((task) => task.id === ids.high)!;
    assert.deepEqual(high, {
      id: ids.high,
      category: 'file',
      target: 'invoice.exe',
      state: 'reported',
      score: 8,
      package: 'exe',
      machine: 'linux1',
      owner: 'bob',
      tags: ['x64'],
      added_on: '2026-01-02T10:00:00.000Z',
      completed_on: '2026-01-02T10:30:00.000Z',
    });
    assert.equal(page.tasks.find((task) => task.id === ids.pending)!.score, null);
  });

  it('filters by state, category, score, date, machine, package, owner and tag', async () => {
    const cases: Array<[string, string[]]> = [
      ['state=reported', ['high', 'low']],
      ['state=pending,failed_analysis', ['failed', 'pending']],
      ['category=url', ['pending', 'low']],
      ['scoreMin=5', ['high']],
      ['scoreMax=5', ['low']],
      ['scoreMin=1&scoreMax=9', ['high', 'low']],
      ['from=2026-01-02&to=2026-01-03', ['pending', 'high']],
      ['from=2026-01-03T10:00:00Z', ['failed', 'pending']],
      ['machine=linux1', ['high']],
      ['machine=win7', ['pending']],
      ['package=bash', ['failed']],
      ['owner=alice', ['failed', 'low']],
      ['tag=x86', ['low']],
      ['tag=x6', []],
      ['tag=50%25_off', ['pending']],
      ['tag=50%25', []],
      ['owner=alice&category=file', ['failed']],
      ['state=&owner=', ['failed', 'pending', 'high', 'low']],
    ];
    for (const [query, expected] of cases) {
      const page = await list(query);
      assert.deepEqual(idsOf(page), expected.map((name) => ids[name]), query);
      assert.equal(page.total, expected.length, query);
    }
  });

  it('sorts by score and completion with the unknown ones last, and paginates', async () => {
    assert.deepEqual(idsOf(await list('sort=score&order=desc')), [ids.high, ids.low, ids.failed, ids.pending]);
    assert.deepEqual(idsOf(await list('sort=score&order=asc')), [ids.low, ids.high, ids.pending, ids.failed]);
    assert.deepEqual(idsOf(await list('sort=completed_on&order=asc')), [ids.low, ids.high, ids.failed, ids.pending]);
    assert.deepEqual(idsOf(await list('sort=id&order=asc')), [ids.low, ids.high, ids.pending, ids.failed]);
    const second = await list('sort=id&order=asc&page=2&pageSize=3');
    assert.deepEqual(idsOf(second), [ids.failed]);
    assert.equal(second.total, 4);
    assert.equal(second.page, 2);
    assert.equal(second.pageSize, 3);
    assert.deepEqual(idsOf(await list('page=9')), []);
  });

  it('refuses values it cannot use with a 400 and a message', async () => {
    for (const query of ['state=done', 'category=mail', 'scoreMin=eleven', 'scoreMax=11', 'from=yesterday', 'sort=target', 'order=up', 'page=0', 'pageSize=501']) {
      const answer = await server.json<{ message: string }>(`/ui/api/tasks?${query}`);
      assert.equal(answer.status, 400, query);
      assert.match(answer.body.message, /^Invalid query: /, query);
    }
  });
});

describe('web bulk actions', () => {
  let server: TestServer;
  before(async () => {
    server = await startTestServer();
  });
  after(() => server.close());

  const bulk = async (body: unknown) => {
    const { csrf } = (await server.json<{ csrf: string }>('/ui/api/session')).body;
    return server.json<{ results: Array<{ id: number; ok: boolean; message?: string; newId?: number }>; message?: string }>('/ui/api/tasks/bulk', {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-nestbox-csrf': csrf },
      body: JSON.stringify(body),
    });
  };
  const reportedUrlTask = () => server.ctx.stores.tasks.insert(taskRow({ status: 'reported', category: 'url', target: 'http://example.test/', score: 4 }));

  it('reschedules each task as /tasks/reschedule does, and says which could not be', async () => {
    const done = await reportedUrlTask();
    const running = await server.ctx.stores.tasks.insert(taskRow({ status: 'running', category: 'url', target: 'http://example.test/' }));
    const answer = await bulk({ action: 'reschedule', ids: [done, running, 987654] });
    assert.equal(answer.status, 200);
    const [first, second, third] = answer.body.results;
    assert.equal(first!.ok, true);
    assert.equal((await server.ctx.stores.tasks.get(first!.newId!))?.status, 'pending');
    assert.equal((await server.ctx.stores.tasks.get(done))?.status, 'recovered');
    assert.deepEqual(second, { id: running, ok: false, message: `Task ${running} is still running; only a task whose analysis has ended can be rescheduled` });
    assert.deepEqual(third, { id: 987654, ok: false, message: 'There is no analysis with the specified ID' });
  });

  it('rereports reported tasks (their score unknown again) and refuses the others', async () => {
    const done = await reportedUrlTask();
    const pending = await server.ctx.stores.tasks.insert(taskRow());
    const answer = await bulk({ action: 'rereport', ids: [done, pending] });
    assert.deepEqual(answer.body.results, [
      { id: done, ok: true },
      { id: pending, ok: false, message: 'Only a reported task can be reported again' },
    ]);
    const task = await server.ctx.stores.tasks.get(done);
    assert.equal(task?.status, 'completed');
    assert.equal(task?.score, null);
  });

  it('deletes tasks with their analysis folders, once each, and not a running one', async () => {
    const first = await reportedUrlTask();
    const second = await reportedUrlTask();
    const running = await server.ctx.stores.tasks.insert(taskRow({ status: 'running' }));
    const folder = server.ctx.layout.analysis(first).dir;
    mkdirSync(folder, { recursive: true });
    writeFileSync(`${folder}/dump.pcap`, 'x');
    const answer = await bulk({ action: 'delete', ids: [first, second, first, running] });
    assert.deepEqual(answer.body.results, [
      { id: first, ok: true },
      { id: second, ok: true },
      { id: running, ok: false, message: 'The task is currently being processed, cannot delete' },
    ]);
    assert.equal(await server.ctx.stores.tasks.get(first), undefined);
    assert.equal(await server.ctx.stores.tasks.get(second), undefined);
    assert.equal(existsSync(folder), false);
    assert.ok(await server.ctx.stores.tasks.get(running));
  });

  it('refuses an unknown action or ids that are not task ids', async () => {
    for (const body of [{ action: 'explode', ids: [1] }, { action: 'delete', ids: [] }, { action: 'delete', ids: ['1'] }, { action: 'delete' }, { action: 'delete', ids: [1], extra: true }]) {
      const answer = await bulk(body);
      assert.equal(answer.status, 400, JSON.stringify(body));
      assert.match(answer.body.message!, /^Invalid request body/);
    }
  });
});
