import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { machineSchema } from '../../src/config/schema.js';
import { TASK_STATUSES } from '../../src/db/schema.js';
import { EventReader } from '../helpers/event-stream.js';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { taskRow } from '../helpers/tasks.js';

interface Dashboard {
  status: Record<string, unknown>;
  tasksByState: Record<string, number>;
  machines: Array<{ name: string; label: string; node: string; platform: string; locked: boolean; task: number | null; status: string | null }>;
  recent: Array<{ id: number; target: string; state: string }>;
}

describe('web dashboard', () => {
  let server: TestServer;
  before(async () => {
    server = await startTestServer({ machines: [machineSchema.parse({ name: 'linux1', label: 'vm-1', platform: 'linux' }), machineSchema.parse({ name: 'linux2' })] });
  });
  after(() => server?.close());

  it('shows /cuckoo/status, every state, the machines with their lock and task, and the latest tasks', async () => {
    const running = await server.ctx.stores.tasks.insert(taskRow({ status: 'running', category: 'url', target: 'http://running.example/' }));
    await server.ctx.stores.tasks.insert(taskRow({ status: 'reported', category: 'url', target: 'http://done.example/' }));
    const [linux1] = await server.ctx.stores.machines.list();
    await server.ctx.stores.machines.lock(linux1!.id);
    await server.ctx.stores.guests.create(running, { name: 'linux1', label: 'vm-1' }, 'linux');

    const { status, body } = await server.json<Dashboard>('/ui/api/dashboard');
    assert.equal(status, 200);
    const cuckoo = (await server.json('/cuckoo/status')).body;
    assert.deepEqual(Object.keys(body.status).sort(), Object.keys(cuckoo).sort());
    assert.deepEqual(body.status.tasks, cuckoo.tasks);
    assert.deepEqual(Object.keys(body.tasksByState).sort(), [...TASK_STATUSES].sort());
    assert.equal(body.tasksByState.running, 1);
    assert.equal(body.tasksByState.reported, 1);
    assert.equal(body.tasksByState.failed_analysis, 0);
    const nodeOf = new Map((await server.db.selectFrom('machines').select(['name', 'node']).execute()).map((row) => [row.name, row.node]));
    assert.deepEqual(body.machines, [
      { name: 'linux1', label: 'vm-1', node: nodeOf.get('linux1'), platform: 'linux', locked: true, task: running, status: null },
      { name: 'linux2', label: 'linux2', node: nodeOf.get('linux2'), platform: 'linux', locked: false, task: null, status: null },
    ]);
    assert.deepEqual(body.recent.map((task) => task.target), ['http://done.example/', 'http://running.example/']);
  });

  it('streams the dashboard at once, then again after a task is created through the API', async () => {
    const events = await EventReader.open(`${server.url}/ui/api/dashboard/stream`);
    assert.equal(events.response.statusCode, 200);
    assert.equal(events.response.headers['content-type'], 'text/event-stream; charset=utf-8');
    assert.equal(events.response.headers['x-content-type-options'], 'nosniff');
    const first = await events.next();
    assert.equal(first?.event, 'dashboard');
    const pendingBefore = (first!.data as Dashboard).tasksByState.pending;

    const created = await server.json<{ task_id: number }>('/tasks/create/url', { method: 'POST', body: new URLSearchParams({ url: 'http://new.example/' }) });
    assert.equal(created.status, 200);
    const updated: Dashboard = await events.until((data: Dashboard) => data.recent.some((task) => task.id === created.body.task_id));
    assert.equal(updated.tasksByState.pending, pendingBefore + 1);
    assert.equal(updated.recent[0]!.target, 'http://new.example/');
    events.cancel();
  });

  it('stops sending to a client that went away', async () => {
    const events = await EventReader.open(`${server.url}/ui/api/dashboard/stream`);
    await events.next();
    const connections = () => new Promise<number>((resolve) => server.app.server.getConnections((_error, count) => resolve(count)));
    const before = await connections();
    events.cancel();
    const deadline = Date.now() + 2000;
    while ((await connections()) >= before && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 20));
    assert.equal(await connections(), before - 1, 'the connection of the stream is gone');
    // Later changes are then sent to nobody, without errors.
    await server.ctx.stores.tasks.insert(taskRow());
    const still = await server.json('/ui/api/dashboard');
    assert.equal(still.status, 200);
  });
});

describe('web dashboard stream and the server closing', () => {
  it('ends open streams so the server closes at once', async () => {
    const server = await startTestServer();
    const events = await EventReader.open(`${server.url}/ui/api/dashboard/stream`);
    assert.equal((await events.next())?.event, 'dashboard');
    const started = Date.now();
    await server.close();
    assert.ok(Date.now() - started < 3000, `close took ${Date.now() - started} ms`);
    assert.equal(await events.next(), undefined, 'the stream ended');
  });
});
