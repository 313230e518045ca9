import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Insertable } from 'kysely';
import type { NodesTable } from '../../src/db/schema.js';
import { startTestPostgres, type TestPostgres } from '../helpers/postgres.js';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { machineOf, secondsAgo as ago } from '../helpers/cluster-rows.js';
import { taskRow } from '../helpers/tasks.js';

const SECRET = 'remote-token-never-shown';

/**
 * /cuckoo/status and /machines/list count and show the whole cluster: nodes of the same database are
 * rows the test writes there (as registered nodes would), on both databases, whose sums and grouping differ.
 */
for (const database of ['sqlite', 'postgres'] as const) describe(`cluster status (${database})`, () => {
  let server: TestServer;
  let postgres: TestPostgres | undefined;

  // The server registered itself (main-a) on start: its row is set like the others'.
  const node = (values: Insertable<NodesTable>) =>
    server.db.insertInto('nodes').values(values).onConflict((oc) => oc.column('name').doUpdateSet(values)).execute();
  const machine = (name: string, nodeName: string, locked = false) => server.db.insertInto('machines').values(machineOf(nodeName, name, locked)).execute();

  before(async () => {
    postgres = database === 'postgres' ? startTestPostgres() : undefined;
    server = await startTestServer({
      // The registry's heartbeat is slowed down: the test sets the nodes' rows, its own included.
      cluster: { node_name: 'main-a', heartbeat_seconds: 3600, lease_seconds: 7200 },
      machines: [{ name: 'linux1' }, { name: 'linux2' }],
      ...(postgres ? { database: { connection: postgres.url } } : {}),
    });
    await node({ name: 'main-a', role: 'all', heartbeat_on: ago(2.5), lease_expires_on: ago(-27.5) });
    await node({ name: 'worker-b', role: 'worker', heartbeat_on: ago(3.5), lease_expires_on: ago(-26.5) });
    await node({ name: 'worker-dead', role: 'worker', heartbeat_on: ago(120.5), lease_expires_on: ago(90) });
    await node({ name: 'worker-off', role: 'worker', enabled: 0, heartbeat_on: ago(1), lease_expires_on: ago(-29) });
    await node({
      name: 'cuckoo-r',
      role: 'remote',
      url: 'http://cuckoo.invalid:8090',
      token: SECRET,
      machines: JSON.stringify([{ name: 'cuckoo1', platform: 'windows', tags: [] }, { name: 'cuckoo2', platform: 'windows', tags: [] }, { name: 'cuckoo3', platform: 'windows', tags: [] }]),
      status: JSON.stringify({ machines: { available: 1, total: 3 }, tasks: { running: 2 } }),
    });
    await machine('b1', 'worker-b', true);
    await machine('b2', 'worker-b');
    await machine('d1', 'worker-dead');
    await machine('o1', 'worker-off');
    const [linux1] = await server.ctx.stores.machines.list();
    await server.ctx.stores.machines.lock(linux1!.id);
    await server.ctx.stores.tasks.insert(taskRow({ status: 'running', node: 'worker-b' }));
    await server.ctx.stores.tasks.insert(taskRow({ status: 'running', node: 'worker-dead' }));
    await server.ctx.stores.tasks.insert(taskRow({ status: 'running', node: 'main-a' }));
    await server.ctx.stores.tasks.insert(taskRow({ status: 'pending' }));
    await server.ctx.stores.tasks.insert(taskRow({ status: 'reported', node: 'worker-b' }));
    await server.ctx.stores.tasks.insert(taskRow({ status: 'failed_analysis', node: 'worker-dead' }));
  });
  after(async () => {
    await server?.close();
    postgres?.stop();
  });

  it('counts the machines of every live node and the tasks of the whole database, in Cuckoo fields', async () => {
    const { status, body } = await server.json('/cuckoo/status');
    assert.equal(status, 200);
    // main-a: linux1 (locked), linux2; worker-b: b1 (locked), b2; cuckoo-r: 3, 1 free. Not worker-dead's, not worker-off's.
    assert.deepEqual(body.machines, { available: 3, total: 7 });
    assert.deepEqual(body.tasks, { completed: 0, pending: 1, reported: 1, running: 3, total: 6 });
  });

  it('shows each node by name: role, liveness, heartbeat age, machines and running tasks, never a token', async () => {
    const { body, response } = await server.json('/cuckoo/status');
    const nodes = body.nodes as Record<string, any>;
    assert.deepEqual(Object.keys(nodes), ['cuckoo-r', 'main-a', 'worker-b', 'worker-dead', 'worker-off']);
    const shown = (name: string) => {
      const { heartbeat_on, heartbeat_age, ...rest } = nodes[name];
      return { ...rest, heartbeat: heartbeat_on === null ? null : typeof heartbeat_on, heartbeat_age };
    };
    const age = (name: string) => nodes[name].heartbeat_age as number;
    assert.ok(age('main-a') >= 2 && age('main-a') <= 4, `main-a: ${age('main-a')}`);
    assert.ok(age('worker-b') >= 3 && age('worker-b') <= 5, `worker-b: ${age('worker-b')}`);
    assert.ok(age('worker-dead') >= 120 && age('worker-dead') <= 122, `worker-dead: ${age('worker-dead')}`);
    assert.match(nodes['worker-b'].heartbeat_on, /^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d$/);
    const expected = {
      'main-a': { role: 'all', enabled: true, live: true, machines: { available: 1, total: 2 }, tasks: { running: 1 } },
      'worker-b': { role: 'worker', enabled: true, live: true, machines: { available: 1, total: 2 }, tasks: { running: 1 } },
      'worker-dead': { role: 'worker', enabled: true, live: false, machines: { available: 1, total: 1 }, tasks: { running: 1 } },
      'worker-off': { role: 'worker', enabled: false, live: false, machines: { available: 1, total: 1 }, tasks: { running: 0 } },
      'cuckoo-r': { role: 'remote', enabled: true, live: true, machines: { available: 1, total: 3 }, tasks: { running: 2 } },
    };
    for (const [name, fields] of Object.entries(expected)) {
      assert.deepEqual(shown(name), { name, ...fields, heartbeat: name === 'cuckoo-r' ? null : 'string', heartbeat_age: name === 'cuckoo-r' ? null : age(name) }, name);
    }
    assert.ok(!JSON.stringify(body).includes(SECRET));
    assert.equal(response.status, 200);
  });

  it("lists every node's machines with the node's name, keeping Cuckoo's fields", async () => {
    const { body } = await server.json('/machines/list');
    const byName = new Map<string, any>(body.machines.map((m: { name: string }) => [m.name, m]));
    assert.deepEqual([...byName.keys()].sort(), ['b1', 'b2', 'd1', 'linux1', 'linux2', 'o1']);
    assert.deepEqual(['b1', 'b2', 'd1', 'o1'].map((name) => byName.get(name).node), ['worker-b', 'worker-b', 'worker-dead', 'worker-off']);
    const stored = await server.db.selectFrom('machines').select(['name', 'node']).where('name', 'in', ['linux1', 'linux2']).execute();
    for (const row of stored) assert.equal(byName.get(row.name).node, row.node, 'the local machines show the node the database gives them');
    assert.deepEqual(Object.keys(byName.get('b1')).sort(), [
      'id', 'interface', 'ip', 'label', 'locked', 'locked_changed_on', 'name', 'node', 'options', 'platform', 'rcparams', 'resultserver_ip', 'resultserver_port', 'snapshot', 'status', 'status_changed_on', 'tags',
    ]);
    assert.equal(byName.get('b1').locked, true);
    const { body: viewed } = await server.json('/machines/view/b2');
    assert.equal(viewed.machine.node, 'worker-b');
  });
});

describe('cluster status of a node that has not registered', () => {
  let server: TestServer;
  before(async () => {
    server = await startTestServer({ cluster: { node_name: 'alone' }, machines: [{ name: 'linux1' }, { name: 'linux2' }, { name: 'linux3' }] });
    // Nodes register on start (cluster/node-registry.ts); the row is taken away to see a node before that.
    await server.db.deleteFrom('nodes').execute();
    await server.ctx.stores.tasks.insert(taskRow({ status: 'running' }));
  });
  after(() => server?.close());

  it('shows this node alone, with its machines and the running tasks that name no node', async () => {
    const { body } = await server.json('/cuckoo/status');
    assert.deepEqual(body.machines, { available: 3, total: 3 });
    assert.deepEqual(body.nodes, {
      alone: { name: 'alone', role: 'all', enabled: true, live: true, heartbeat_on: null, heartbeat_age: null, machines: { available: 3, total: 3 }, tasks: { running: 1 } },
    });
  });
});
