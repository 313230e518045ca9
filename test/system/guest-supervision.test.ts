import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { guestFile } from '../../src/machinery/qemu/guest-files.js';
import { GUEST_LAUNCHER, installGuestSupervisor } from '../../src/machinery/qemu/guest-supervisor.js';

/**
 * The qemu guest's supervision (guest/analyzer/supervision.py driving native/supervisor.c in its guest
 * mode, and native/init.c's `--exec` hand-off, as installGuestSupervisor bakes them into the image), run
 * here on the host as the guest's root runs it: quick to check without booting a guest. The end-to-end
 * test on a qemu machine is e2e-qemu-supervisor.test.ts.
 */
const DRIVER = `
import json, subprocess, sys
sys.path.insert(0, sys.argv[1])
import supervision
supervision.SUPERVISOR, supervision.LAUNCHER, supervision.CAPTURES = sys.argv[2], sys.argv[3], sys.argv[4]
supervision.SUPERVISOR_ERRORS = sys.argv[4] + ".err"

class Channels:
    def say(self, message):
        print(message, flush=True)

dumps = []
config = {"supervisor": {"sleep_threshold_ms": 2000}, "memory": True, "dropped_files": {}}
supervisor = supervision.Supervision(config, Channels(), sys.argv[5], dumps.append)
supervisor.start(watch_files=True)
command, options = supervisor.launch(["/bin/sh", sys.argv[6]], None)
with supervision.HeldDescriptors():
    sample = subprocess.Popen(command, **options)
supervisor.started()
sample.wait()
supervisor.finish()
print(json.dumps({"code": sample.returncode, "records": supervisor.records, "uploads": list(supervisor.captures_to_upload()), "dumps": dumps}))
`;

describe('the qemu guest supervision, run on the host', { timeout: 180_000 }, () => {
  const work = mkdtempSync(join(tmpdir(), 'nestbox-guest-supervision-'));
  const root = join(work, 'root');
  const scratch = join(work, 'scratch');
  after(() => rmSync(work, { recursive: true, force: true }));

  before(async () => {
    mkdirSync(scratch);
    await installGuestSupervisor(root, join(work, 'build'));
  });

  it('ends a long sleep, copies a program run then deleted, leaves stock programs, and stops each exit for its dump', () => {
    const script = join(scratch, 'sample.sh');
    writeFileSync(
      script,
      `sleep 60
cp /bin/true ${scratch}/hidden && ${scratch}/hidden && rm ${scratch}/hidden
echo written > ${scratch}/note && rm ${scratch}/note
sleep 0.1
`,
    );
    const started = Date.now();
    const output = execFileSync(
      'python3',
      ['-c', DRIVER, guestFile('analyzer'), join(root, 'usr/lib/nestbox/supervisor'), join(root, GUEST_LAUNCHER), join(work, 'captured'), scratch, script],
      { encoding: 'utf8', timeout: 60_000 },
    );
    assert.ok(Date.now() - started < 30_000, 'the 60 s sleep did not run');
    const lines = output.trim().split('\n');
    const result = JSON.parse(lines.at(-1)!) as { code: number; records: Array<Record<string, unknown>>; uploads: Array<[number, string, string]>; dumps: number[] };
    assert.equal(result.code, 0, output);
    assert.deepEqual(
      result.records.filter((record) => record.event === 'sleep').map((record) => [record.call, record.seconds]),
      [['clock_nanosleep', 60]],
      'the long sleep only',
    );
    assert.ok(lines.includes('process ' + String(result.records[0]!.pid) + ' asked to sleep 60 s (clock_nanosleep): the sleep returned at once'), output);
    const captured = result.records.filter((record) => record.event === 'capture').map((record) => [record.reason, record.filepath]);
    assert.deepEqual(captured, [['exec', `${scratch}/hidden`], ['delete', `${scratch}/note`]], 'no stock program (sh, sleep, cp, rm), once each');
    const uploads = new Map(result.uploads.map(([size, path, copy]) => [path, { size, copy }]));
    assert.deepEqual(readFileSync(uploads.get(`${scratch}/hidden`)!.copy), readFileSync('/bin/true'));
    assert.equal(readFileSync(uploads.get(`${scratch}/note`)!.copy, 'utf8'), 'written\n');
    // sh, sleep x2, cp, hidden, rm x2, echo is a builtin: every process of the sample stopped at its exit.
    assert.ok(result.dumps.length >= 7, `exits: ${result.dumps.join(',')}`);
  });
});
