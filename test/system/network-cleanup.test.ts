import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { after, describe, it } from 'node:test';
import { cleanupStaleNetworks, createTaskNetwork } from '../../src/machinery/host/network/index.js';
import { holdNetns, quietLog, remainsOf, runIn, testId } from '../network-helpers.js';

/**
 * What a crashed nestbox leaves behind is removed at the next start, and only that: a network whose
 * owner still runs (this test's own) is left alone.
 */
const NETWORK_MODULE = fileURLToPath(new URL('../../src/machinery/host/network/index.js', import.meta.url));
const dir = mkdtempSync(join(tmpdir(), 'nestbox-net-cleanup-'));
after(() => rmSync(dir, { recursive: true, force: true }));

/** Another nestbox process that opens a task network and is then killed without closing it. */
async function crashedOwner(id: string): Promise<{ netnsName: string; gatewayNetns: string }> {
  const script = `
    import { pino } from 'pino';
    import { createTaskNetwork } from ${JSON.stringify(NETWORK_MODULE)};
    const network = await createTaskNetwork({ id: ${JSON.stringify(id)}, route: 'inetsim', internetInterface: '',
      pcapPath: ${JSON.stringify(join(dir, `${id}.pcap`))}, log: pino({ level: 'silent' }) });
    console.log(JSON.stringify({ netnsName: network.netnsName }));
    setInterval(() => {}, 1000);`;
  const child = spawn(process.execPath, ['--input-type=module', '-e', script], { cwd: fileURLToPath(new URL('../../..', import.meta.url)), stdio: ['ignore', 'pipe', 'inherit'] });
  const line = await new Promise<string>((resolve, reject) => {
    let output = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
      output += chunk;
      if (output.includes('\n')) resolve(output.trim());
    });
    child.once('exit', (code) => reject(new Error(`owner exited early with ${code}`)));
  });
  child.kill('SIGKILL');
  await new Promise((resolve) => child.once('exit', resolve));
  const { netnsName } = JSON.parse(line) as { netnsName: string };
  return { netnsName, gatewayNetns: `${netnsName}-gw` };
}

describe('cleanupStaleNetworks', () => {
  it('removes the networks of dead owners, with their processes, and keeps live ones', async () => {
    const staleId = testId();
    const live = await createTaskNetwork({ id: testId(), route: 'inetsim', internetInterface: '', pcapPath: join(dir, 'live.pcap'), log: quietLog });
    try {
      const stale = await crashedOwner(staleId);
      assert.ok(existsSync(`/run/netns/${stale.netnsName}`) && existsSync(`/run/netns/${stale.gatewayNetns}`));
      const gateway = holdNetns(stale.gatewayNetns);
      try {
        assert.ok(gateway.pids().length > 0, 'the crash left the capture running');
        const report = await cleanupStaleNetworks(quietLog);
        assert.deepEqual(gateway.pids(), [], 'processes of the stale network are gone');
        assert.ok(report.namespaces.includes(stale.netnsName) && report.namespaces.includes(stale.gatewayNetns));
        assert.ok(!report.namespaces.includes(live.netnsName), 'the live network is not stale');
      } finally {
        gateway.release();
      }
      assert.deepEqual(await remainsOf(staleId), []);
      assert.ok(!existsSync(`/run/nestbox/net/${staleId}.json`), 'the dead owner record is gone');

      const answer = await runIn(live.netnsName, 'dig', ['+short', '+tries=1', '+time=2', `@${live.gatewayAddress}`, 'still.alive.example']);
      assert.match(answer.stdout, /^198\.1[89]\./, 'the live network still works');

      const again = await cleanupStaleNetworks(quietLog);
      assert.ok(!again.namespaces.includes(stale.netnsName));
    } finally {
      await live.close();
    }
  });

  it('lets a task reuse the id of a crashed network', async () => {
    const id = testId();
    await crashedOwner(id);
    const network = await createTaskNetwork({ id, route: 'none', internetInterface: '', pcapPath: join(dir, 'reuse.pcap'), log: quietLog });
    try {
      assert.equal((await runIn(network.netnsName, 'true', [])).code, 0);
    } finally {
      await network.close();
    }
    assert.deepEqual(await remainsOf(id), []);
  });
});
