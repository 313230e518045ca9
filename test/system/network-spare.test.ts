import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { prepareTaskNetwork, SpareNetwork } from '../../src/machinery/host/network/index.js';
import { assertNoWayOut, holdNetns, quietLog, type HeldNetns, remainsOf, runIn, testId, tsharkFields } from '../network-helpers.js';

/**
 * Networks made before their task (the linux machine keeps one ready while it idles): handed over, a
 * spare is a whole task network whose capture holds the task's traffic from its first packet; unused,
 * it leaves nothing behind. Traffic goes only to a documentation address inside namespaces this test
 * creates, which have no uplink (assertNoWayOut).
 */
const dir = mkdtempSync(join(tmpdir(), 'nestbox-net-spare-'));
after(() => rmSync(dir, { recursive: true, force: true }));

describe('a network prepared ahead of its task', () => {
  it('captures the task from its first packet once handed over, with the fake internet already serving', async () => {
    const prepared = await prepareTaskNetwork({ id: testId(), route: 'inetsim', internetInterface: '', log: quietLog });
    // The machine idles a while before its task comes.
    await new Promise((resolve) => setTimeout(resolve, 300));
    const pcap = join(dir, 'handed-over.pcap');
    const network = await prepared.handOver(pcap);
    try {
      await assertNoWayOut(network.netnsName, `${network.netnsName}-gw`, network.gatewayAddress);
      const http = await runIn(network.netnsName, 'curl', ['-sS', '-m', '5', '-o', '/dev/null', '-w', '%{http_code}', 'http://198.51.100.7/spare']);
      assert.equal(http.stdout, '200', http.stderr);
    } finally {
      await network.close();
    }
    const requests = await tsharkFields(pcap, 'http.request', ['ip.dst', 'http.request.uri']);
    assert.deepEqual(requests, [['198.51.100.7', '/spare']]);
    assert.deepEqual(await remainsOf(prepared.id), []);
  });

  it('removes itself when its capture cannot be written, and leaves nothing', async () => {
    const prepared = await prepareTaskNetwork({ id: testId(), route: 'none', internetInterface: '', log: quietLog });
    await assert.rejects(prepared.handOver(join(dir, 'missing-folder', 'dump.pcap')), /cannot write the capture/);
    assert.deepEqual(await remainsOf(prepared.id), []);
  });
});

describe('SpareNetwork', () => {
  it('gives its network to a task of its route only, and removes what no task took', async () => {
    const ids: string[] = [];
    const spares = new SpareNetwork(() => {
      ids.push(testId());
      return ids.at(-1)!;
    }, quietLog);
    spares.refill('none');
    assert.equal(await spares.take('inetsim'), null, 'no spare for another route');
    const taken = await spares.take('none');
    assert.equal(taken?.id, ids[0]);
    assert.equal(taken?.route, 'none');
    assert.equal(await spares.take('none'), null, 'a spare serves one task');
    await taken!.discard();

    spares.refill('drop');
    spares.refill('inetsim');
    spares.refill('internet');
    assert.equal(ids.length, 3, 'a spare of another route is replaced; none is made for the internet route');
    const gateway = holdNetnsOnceMade(`nestbox-net-${ids[2]}-gw`);
    await spares.close();
    const held = await gateway;
    try {
      if (held) assert.deepEqual(held.pids(), [], 'the fake internet and the capture are gone once close() resolves');
    } finally {
      held?.release();
    }
    spares.refill('none');
    assert.equal(ids.length, 3, 'nothing is made once closed');
    for (const id of ids) assert.deepEqual(await remainsOf(id), [], `network ${id} was left behind`);
  });
});

/** Holds the namespace once it exists, to find processes left in it after it is deleted. */
async function holdNetnsOnceMade(name: string): Promise<HeldNetns | null> {
  for (let tries = 0; tries < 200; tries++) {
    try {
      return holdNetns(name);
    } catch {
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
  }
  return null;
}
