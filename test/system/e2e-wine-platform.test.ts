import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { analyseSample } from '../helpers/sample-through-api.js';
import type { TestServer } from '../helpers/server.js';
import { startWineTestServer } from '../helpers/wine-machine.js';
import { windowsSample } from '../helpers/windows-samples.js';

/**
 * Tasks asking for platform windows on a host with no Windows machine, end to end through the API: a PE
 * runs under Wine on the linux machine, and what the API shows of the machines stays as configured.
 */
describe('platform windows under Wine on the linux machine, through the API', { timeout: 1_800_000 }, () => {
  let server: TestServer;
  before(async () => {
    server = await startWineTestServer();
  });
  after(() => server?.close());

  /** Every Windows call of the report (they have a Cuckoo category), across processes. */
  const windowsCalls = (report: any): Array<{ api: string; category: string }> =>
    report.behavior.processes.flatMap((process: any) => process.calls ?? []).filter((call: any) => call.category !== undefined);

  it('runs a PE submitted with platform=windows under Wine, and /machines/list and /cuckoo/status still show a linux machine', async () => {
    const report = await analyseSample(server, 'mutex.exe', readFileSync(windowsSample('mutex', 64)), { platform: 'windows', timeout: '60' });
    assert.equal(report.info.platform, 'windows');
    assert.equal(report.info.machine.name, 'linux1');
    assert.match(readFileSync(join(report.taskDir, 'analysis.log'), 'utf8'), /analysis package: wine/);
    const mutexCalls = windowsCalls(report).filter((call) => call.api === 'CreateMutexW');
    assert.ok(mutexCalls.length > 0, `CreateMutexW among ${JSON.stringify([...new Set(windowsCalls(report).map((call) => call.api))].slice(0, 60))}`);
    assert.equal(mutexCalls[0]!.category, 'synchronisation');
    assert.ok(report.behavior.summary.mutex.includes('Local\\nbx-7f3a-single-instance'), JSON.stringify(report.behavior.summary.mutex));

    const { body: list } = await server.json('/machines/list');
    assert.deepEqual(list.machines.map((machine: any) => [machine.name, machine.platform]), [['linux1', 'linux']]);
    const { body: status } = await server.json('/cuckoo/status');
    assert.equal(status.machines.total, 1);
    assert.equal(status.machines.available, 1);
  });
});
