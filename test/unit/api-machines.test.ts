import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { machineSchema } from '../../src/config/schema.js';
import { startTestServer, type TestServer } from '../helpers/server.js';

describe('GET /machines/list and /machines/view', () => {
  let server: TestServer;
  before(async () => {
    server = await startTestServer({
      machines: [
        machineSchema.parse({
          name: 'cuckoo1',
          label: 'vm-label-7',
          platform: 'linux',
          tags: ['32bit', 'acrobat_6'],
          ip: '10.200.0.7',
          interface: 'nbx0',
          snapshot: 'snap1',
          options: ['noagent'],
          resultserver_port: 2042,
        }),
        machineSchema.parse({ name: 'plain' }),
      ],
    });
    const [first] = await server.ctx.stores.machines.list();
    await server.ctx.stores.machines.lock(first!.id);
  });
  after(() => server.close());

  const cuckoo1 = (body: any) => body.machines.find((m: { name: string }) => m.name === 'cuckoo1');

  it('lists the configured machines in database order with Cuckoo field names and types', async () => {
    for (const path of ['/machines/list', '/v1/machines/list']) {
      const { status, body } = await server.json(path);
      assert.equal(status, 200);
      assert.deepEqual(body.machines.map((m: { name: string }) => m.name), ['cuckoo1', 'plain']);
      const machine = cuckoo1(body);
      assert.match(machine.locked_changed_on, /^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d$/);
      assert.equal(typeof machine.node, 'string', "nestbox's node field: who runs the machine");
      assert.deepEqual(machine, {
        id: machine.id,
        interface: 'nbx0',
        ip: '10.200.0.7',
        label: 'vm-label-7',
        locked: true,
        locked_changed_on: machine.locked_changed_on,
        name: 'cuckoo1',
        node: machine.node,
        options: ['noagent'],
        platform: 'linux',
        rcparams: {},
        resultserver_ip: '10.200.0.1',
        resultserver_port: 2042,
        snapshot: 'snap1',
        status: null,
        status_changed_on: null,
        tags: ['32bit', 'acrobat_6'],
      });
      const plain = body.machines[1];
      assert.deepEqual([plain.label, plain.locked, plain.options, plain.tags, plain.interface, plain.snapshot], ['plain', false, [], [], null, null]);
    }
  });

  it('views one machine by name, under /v1 too', async () => {
    const listed = cuckoo1((await server.json('/machines/list')).body);
    for (const path of ['/machines/view/cuckoo1', '/v1/machines/view/cuckoo1']) {
      const { status, body } = await server.json(path);
      assert.equal(status, 200);
      assert.deepEqual(body, { machine: listed });
    }
  });

  it('answers 404 "Machine not found" for a label, an unknown or an encoded name', async () => {
    for (const name of ['vm-label-7', 'nope', 'cuckoo1%00', 'a%2Fcuckoo1', 'CUCKOO1']) {
      const { status, body } = await server.json(`/machines/view/${name}`);
      assert.equal(status, 404, name);
      assert.deepEqual(body, { message: 'Machine not found' });
    }
  });
});

describe('GET /machines/list without machines', () => {
  let server: TestServer;
  before(async () => {
    server = await startTestServer({ machines: [] });
  });
  after(() => server.close());

  it('answers an empty list', async () => {
    assert.deepEqual((await server.json('/machines/list')).body, { machines: [] });
  });
});
