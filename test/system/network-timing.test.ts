import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { after, describe, it } from 'node:test';
import { createTaskNetwork } from '../../src/machinery/host/network/index.js';
import { quietLog, remainsOf, runHost, testId } from '../network-helpers.js';

/**
 * Setup and teardown times of a task network, reported as test diagnostics (median of several runs),
 * with a generous ceiling so that a hang or a regression by an order of magnitude fails.
 */
const RUNS = 5;
const dir = mkdtempSync(join(tmpdir(), 'nestbox-net-timing-'));
after(() => rmSync(dir, { recursive: true, force: true }));

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;

describe('task network timing', () => {
  for (const route of ['none', 'inetsim']) {
    it(`sets up and tears down route=${route} quickly, leaving nothing`, async (t) => {
      const setups: number[] = [];
      const teardowns: number[] = [];
      for (let run = 0; run < RUNS; run += 1) {
        const id = testId();
        let started = performance.now();
        const network = await createTaskNetwork({ id, route, internetInterface: '', pcapPath: join(dir, `${id}.pcap`), log: quietLog });
        setups.push(performance.now() - started);
        started = performance.now();
        await network.close();
        teardowns.push(performance.now() - started);
        assert.deepEqual(await remainsOf(id), []);
      }
      const load = (await runHost('cat', ['/proc/loadavg'])).stdout.split(' ').slice(0, 3).join(' ');
      t.diagnostic(`route=${route}: setup median ${median(setups).toFixed(0)} ms (${setups.map((ms) => ms.toFixed(0)).join(', ')}), ` +
        `teardown median ${median(teardowns).toFixed(0)} ms (${teardowns.map((ms) => ms.toFixed(0)).join(', ')}); load ${load}`);
      assert.ok(median(setups) < 5000, `setup median ${median(setups)} ms`);
      assert.ok(median(teardowns) < 3000, `teardown median ${median(teardowns)} ms`);
    });
  }
});
