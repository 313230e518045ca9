import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { EVENTS_FILE } from '../../src/report/events.js';
import { createTracer } from '../../src/machinery/host/tracer/index.js';
import { assertNothingLeft, runInMachine, testMachinery } from '../linux-support.js';

/**
 * The linux machine with the real behaviour tracers: eBPF filtered on the machine's v2 cgroup, and the
 * strace fallback, which runs inside the machine and hands its log back. Either way the log holds the
 * sample alone: it starts at the sample's exec, never at nestbox's launch or the machine's init.
 */
describe('linux machine with the behaviour tracer', () => {
  for (const prefer of ['ebpf', 'strace'] as const) {
    it(`records only the sample with the ${prefer} tracer, on the first task and those after it`, async () => {
      // Kept warm, as in service: from the second task on, the program is armed in milliseconds.
      const traced = testMachinery({ tracing: true }, { createTracer: (tracerLog) => createTracer(tracerLog, { prefer }) });
      try {
        await traced.prepare();
        for (let run = 0; run < 3; run++) {
          const outcome = await runInMachine(traced, { sample: { name: 'traced.sh', content: '#!/bin/sh\necho traced > /tmp/traced.txt\n' } });
          assert.equal(outcome.result.ended, 'exited', JSON.stringify(outcome.timings));
          assert.match(outcome.log, new RegExp(`tracing with ${prefer}`));
          const events = readFileSync(join(outcome.paths.dir, EVENTS_FILE), 'utf8').split('\n').filter(Boolean).map((line) => JSON.parse(line));
          const behaviour = events.filter((event) => !event.kind.startsWith('tracer.'));
          const first = behaviour[0];
          assert.deepEqual(
            [first?.kind, first?.path, first?.argv, first?.ppid],
            ['process.exec', '/bin/bash', ['/bin/bash', '/tmp/traced.sh'], 0],
            `run ${run}: the sample's exec comes first, with no parent of nestbox's`,
          );
          assert.ok(events.some((event) => event.kind === 'file.open' && event.path === '/tmp/traced.txt'), 'the file write is recorded');
          assert.deepEqual(outcome.files.map((file) => file.filepath), ['/tmp/traced.txt'], 'the tracer log is no dropped file');
          const pids = new Set(behaviour.map((event) => event.pid));
          assert.deepEqual([...pids], [first.pid], `run ${run}: one process, the sample's: no launcher, init or ${prefer}`);
          const text = JSON.stringify(behaviour);
          for (const word of ['bwrap', 'nsenter', 'init', 'strace', '/run/nestbox', 'nestbox-machine-']) assert.ok(!text.includes(word), `run ${run}: ${word}`);
          assertNothingLeft(assert.deepEqual, outcome.machineId);
        }
      } finally {
        await traced.close();
      }
    });
  }

});
