import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { statSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { DroppedEntry } from '../../src/machinery/dropped/entry.js';
import type { Machinery } from '../../src/machinery/types.js';
import { assertNothingLeft, closeTestMachineries, runInMachine, testMachinery } from '../linux-support.js';

/**
 * A sample on a real linux machine fills its disk: the dropped_files limits decide what reaches the
 * analysis folder. The expected hashes are computed here from how the sample made its files.
 */

const MIB = 2 ** 20;
const LIMITS = { max_file_size: MIB, max_total_size: 1.5 * MIB, max_files: 1000 };
const LINE = 'nestbox dropped-file limits\n';
const SAMPLE = `#!/bin/sh
echo small > /tmp/small.txt
yes '${LINE.trim()}' | head -c 3000000 > /tmp/big.txt
printf FILLHEAD > /tmp/fill && truncate -s 100M /tmp/fill
printf FILLHEAD > /tmp/fill2 && truncate -s 200M /tmp/fill2
`;

/** SHA-256 of the first `bytes` of a file that repeats `line`, and of one that starts with `head` then zeros. */
function repeatedSha256(line: string, bytes: number): string {
  return createHash('sha256').update(line.repeat(Math.ceil(bytes / line.length)).slice(0, bytes)).digest('hex');
}

function headThenZerosSha256(head: string, bytes: number): string {
  return createHash('sha256').update(head).update(Buffer.alloc(bytes - head.length)).digest('hex');
}

describe('linux machine: dropped files held to the dropped_files limits', () => {
  after(closeTestMachineries);
  let machinery: Machinery;
  before(async () => {
    machinery = testMachinery({}, {}, { dropped_files: LIMITS });
    await machinery.prepare();
  });

  it('stores the first bytes of files over the limit, lists the rest without content, and says so', async () => {
    const outcome = await runInMachine(machinery, { sample: { name: 'filler.sh', content: SAMPLE, mode: 0o755 } });
    assert.equal(outcome.result.ended, 'exited', outcome.log);
    // files.json lines with a machine path are the dropped files' (screenshots and dumps have none).
    const dropped = (outcome.files as unknown as DroppedEntry[]).filter((line) => typeof line.filepath === 'string');
    const of = (path: string) => dropped.find((entry) => entry.filepath === path)!;

    assert.deepEqual([of('/tmp/small.txt').size, of('/tmp/small.txt').truncated], [6, undefined]);

    const big = of('/tmp/big.txt');
    assert.deepEqual([big.size, big.truncated, big.kept_size], [3_000_000, true, MIB]);
    assert.equal(big.kept_sha256, repeatedSha256(LINE, MIB));
    assert.equal(statSync(join(outcome.paths.dir, big.path!)).size, MIB);
    assert.match(big.note!, /per-file limit dropped_files\.max_file_size of 1048576 bytes/);

    // The whole task budget is spent, /tmp/fill gets what is left, /tmp/fill2 nothing.
    const storedBytes = dropped.reduce((sum, entry) => sum + (entry.kept_size ?? (entry.path ? entry.size : 0)), 0);
    assert.equal(storedBytes, LIMITS.max_total_size);
    const filesOnDisk = execFileSync('du', ['-sb', '--apparent-size', outcome.paths.files], { encoding: 'utf8' });
    assert.ok(Number(filesOnDisk.split('\t')[0]) <= LIMITS.max_total_size + 4096, filesOnDisk);
    const fill = of('/tmp/fill');
    assert.equal(fill.size, 100 * MIB);
    assert.ok(fill.kept_size! > 0 && fill.kept_size! < LIMITS.max_total_size - MIB, `kept ${fill.kept_size}`);
    assert.equal(fill.kept_sha256, headThenZerosSha256('FILLHEAD', fill.kept_size!));
    assert.match(fill.note!, /the task's limit dropped_files\.max_total_size of 1572864 bytes was spent/);
    assert.deepEqual(of('/tmp/fill2'), {
      path: null,
      filepath: '/tmp/fill2',
      pids: [],
      size: 200 * MIB,
      truncated: true,
      kept_size: 0,
      note: "content not kept (the task's limit dropped_files.max_total_size of 1572864 bytes was spent): only the path and size are recorded",
    });
    assert.ok(outcome.result.warnings.some((warning) => /^2 dropped files truncated .*\/tmp\/big\.txt \(3000000 bytes, 1048576 kept\)/.test(warning)), outcome.result.warnings.join('\n'));
    assert.ok(outcome.result.warnings.some((warning) => /^1 dropped file listed with path and size only.*\/tmp\/fill2 \(209715200 bytes, 0 kept\)/.test(warning)));
    assertNothingLeft(assert.deepEqual, outcome.machineId);
  });
});
