import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { autoMachineCount, hostResources } from '../../src/config/auto-machines.js';
import { configSchema } from '../../src/config/schema.js';
import { reportOf, submitSample } from '../helpers/sample-through-api.js';
import { startTestServer, type TestServer } from '../helpers/server.js';

/** Long enough for runs to overlap when they can, short enough (under sleep_skip_threshold) to really sleep. */
const script = (name: string) => `#!/bin/sh\necho "${name} started" > /tmp/${name}.txt\nsleep 3\necho done >> /tmp/${name}.txt\n`;
const BATCH = 4;

/**
 * "One host used fully": a server with the default configuration (no machines list) runs a batch of
 * short samples on several linux machines at once, and finishes it.
 */
describe('a batch of samples on the default machines', { timeout: 900_000 }, () => {
  const expected = autoMachineCount(hostResources(), configSchema.parse({}).machines_auto);
  let server: TestServer;
  before(async () => {
    server = await startTestServer({}, { engine: true, pollMs: 200 });
  });
  after(() => server?.close());

  it('runs in parallel on more than one machine and finishes', { skip: expected < 2 && 'this host runs one machine at a time' }, async (t) => {
    const { body: listed } = await server.json<{ machines: Array<{ name: string }> }>('/machines/list');
    assert.equal(listed.machines.length, expected, 'the default configures the machines the host can run');

    const ids: number[] = [];
    for (let n = 1; n <= BATCH; n += 1) ids.push(await submitSample(server, `batch-${n}.sh`, script(`batch-${n}`), { timeout: '20' }));
    for (const id of ids) await reportOf(server, id);

    const runs = await server.db.selectFrom('tasks').select(['id', 'started_on', 'completed_on']).where('id', 'in', ids).orderBy('started_on').execute();
    const guests = await server.db.selectFrom('guests').select(['task_id', 'name']).where('task_id', 'in', ids).execute();
    const machines = new Set(guests.map((guest) => guest.name));
    assert.ok(machines.size > 1, `the batch ran on ${[...machines].join(', ')}`);
    const intervals = runs.map((run) => ({ id: run.id, start: Date.parse(run.started_on!), end: Date.parse(run.completed_on!) }));
    const overlapping = intervals.filter((a, i) => intervals.some((b, j) => i !== j && a.start < b.end && b.start < a.end));
    assert.ok(overlapping.length >= 2, `no two runs overlapped: ${JSON.stringify(intervals)}`);
    const elapsed = Math.max(...intervals.map((run) => run.end)) - Math.min(...intervals.map((run) => run.start));
    const serial = intervals.reduce((sum, run) => sum + run.end - run.start, 0);
    t.diagnostic(`${BATCH} samples on ${machines.size} machines: ${elapsed} ms from first start to last end, ${serial} ms of runs added up`);
    assert.ok(elapsed < serial, `the batch took ${elapsed} ms, as long as its runs one after another (${serial} ms)`);
  });
});
