import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { after, describe, it } from 'node:test';
import { endChild } from '../../src/machinery/host/network/child-exit.js';
import { createTaskNetwork } from '../../src/machinery/host/network/index.js';
import { holdNetns, quietLog, remainsOf, testId } from '../network-helpers.js';

/** close() of a task network resolves only once nothing of it runs any more, whatever its helpers do. */
describe('ending the processes of a task network', () => {
  const dir = mkdtempSync(join(tmpdir(), 'nestbox-net-'));
  after(() => rmSync(dir, { recursive: true, force: true }));

  it('kills a helper that ignores the request to stop, and resolves once it is reaped', async () => {
    const stubborn = spawn(process.execPath, ['-e', "process.on('SIGINT', () => {}); console.log('up'); setInterval(() => {}, 1000)"], {
      stdio: ['ignore', 'pipe', 'ignore'],
    });
    await new Promise((resolve) => stubborn.stdout.once('data', resolve));
    let asked = 0;
    const started = Date.now();
    const ask = () => {
      asked += 1;
      stubborn.kill('SIGINT');
    };
    await endChild(stubborn, { ask, graceMs: 200 });
    assert.equal(asked, 1);
    assert.equal(stubborn.signalCode, 'SIGKILL');
    // (a little under 200: timers and Date.now() use different clocks)
    assert.ok(Date.now() - started >= 190, 'it had its grace time first');
    assert.throws(() => process.kill(stubborn.pid!, 0), { code: 'ESRCH' }, 'the pid is gone: no zombie left');
  });

  it('does not kill a helper that stops when asked', async () => {
    const polite = spawn(process.execPath, ['-e', "process.stdin.on('end', () => process.exit(0)).resume()"], { stdio: ['pipe', 'ignore', 'ignore'] });
    await endChild(polite, { ask: () => polite.stdin.end(), graceMs: 10_000 });
    assert.equal(polite.exitCode, 0);
  });

  it('close() leaves no process in its namespaces, even one it did not start', async () => {
    const id = testId();
    const network = await createTaskNetwork({ id, route: 'inetsim', internetInterface: '', pcapPath: join(dir, 'dump.pcap'), log: quietLog });
    const gatewayNetns = `${network.netnsName}-gw`;
    const gateway = holdNetns(gatewayNetns);
    const machine = holdNetns(network.netnsName);
    try {
      // A process that no stop() knows of, as a helper's own child would be.
      const stray = spawn('ip', ['netns', 'exec', gatewayNetns, 'sleep', '600'], { stdio: 'ignore' });
      while (!gateway.pids().includes(stray.pid!)) await sleep(10);
      assert.ok(gateway.pids().length >= 3, 'the capture, the fake internet and the stray run in the gateway');
      await network.close();
      assert.deepEqual(gateway.pids(), [], 'nothing runs in the gateway namespace once close() resolves');
      assert.deepEqual(machine.pids(), []);
      assert.deepEqual(await remainsOf(id), []);
    } finally {
      gateway.release();
      machine.release();
    }
  });
});
