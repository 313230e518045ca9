import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { EVENTS_FILE } from '../../src/report/events.js';
import { createTracer } from '../../src/machinery/host/tracer/index.js';
import { assertNothingLeft, runInMachine, testMachinery } from '../linux-support.js';

/**
 * The linux machine with the real behaviour tracers: eBPF filtered on the machine's v2 cgroup, and the
 * strace fallback, which runs inside the machine and hands its log back.
 */
describe('linux machine with the behaviour tracer', () => {
  for (const prefer of ['ebpf', 'strace'] as const) {
    it(`records the behaviour with the ${prefer} tracer`, async () => {
      const traced = testMachinery({ tracing: true }, { createTracer: (tracerLog) => createTracer(tracerLog, { prefer, keepWarm: false }) });
      try {
        await traced.prepare();
        const outcome = await runInMachine(traced, { sample: { name: 'traced.sh', content: '#!/bin/sh\necho traced > /tmp/traced.txt\n' } });
        assert.equal(outcome.result.ended, 'exited', JSON.stringify(outcome.timings));
        assert.match(outcome.log, new RegExp(`tracing with ${prefer}`));
        const events = readFileSync(join(outcome.paths.dir, EVENTS_FILE), 'utf8').split('\n').filter(Boolean).map((line) => JSON.parse(line));
        assert.ok(events.some((event) => event.kind === 'process.exec' && event.argv?.includes('/tmp/traced.sh')), 'the sample exec is recorded');
        assert.ok(events.some((event) => event.kind === 'file.open' && event.path === '/tmp/traced.txt'), 'the file write is recorded');
        assert.deepEqual(outcome.files.map((file) => file.filepath), ['/tmp/traced.txt'], 'the tracer log is no dropped file');
        const launchers = events.filter((event) => ['bwrap', 'nsenter', 'nestbox-enter'].includes(event.comm));
        assert.deepEqual(launchers, [], 'only the machine init and the sample are traced');
        assertNothingLeft(assert.deepEqual, outcome.machineId);
      } finally {
        await traced.close();
      }
    });
  }

});
