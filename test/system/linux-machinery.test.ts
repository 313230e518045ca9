import assert from 'node:assert/strict';
import { execFileSync, spawn } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { createInterface } from 'node:readline';
import { after, before, describe, it } from 'node:test';
import { machineId } from '../../src/machinery/host/machine-id.js';
import { rebootStatePath } from '../../src/machinery/linux/reboot-state.js';
import { linuxSettingsSchema } from '../../src/machinery/linux/settings.js';
import type { Machinery } from '../../src/machinery/types.js';
import { isNestboxError } from '../../src/errors.js';
import { detectCgroupLayout, MachineCgroups } from '../../src/machinery/linux/cgroups.js';
import { assertNothingLeft, closeTestMachineries, leftoversOf, runInMachine, runningMachineIds, sampleOutput, testMachinery, workDir } from '../linux-support.js';

/**
 * The linux machinery as the scheduler uses it (start -> run -> stop -> collect -> destroy) with the real
 * task network: analysis packages, archives, URLs on the virtual display with screenshots, memory
 * dumps, reboot tasks, and the cleanup of what a crashed process left behind.
 */

describe('linux machinery', () => {
  // Spare networks and waiting tracers of every machinery made here must not outlive the tests.
  after(closeTestMachineries);
  let machinery: Machinery;
  before(async () => {
    machinery = testMachinery();
    await machinery.prepare();
  });

  it('runs Python, Perl and Node.js scripts with their interpreters', async () => {
    const samples = [
      { name: 'p.py', content: 'import sys\nprint("python says", sys.argv[1:])\n', expect: "python says ['a b']" },
      { name: 'p.pl', content: 'print "perl says @ARGV\\n";\n', expect: 'perl says a b' },
      { name: 'p.js', content: 'console.log("node says", process.argv.slice(2).join("|"));\n', expect: 'node says a b' },
    ];
    for (const sample of samples) {
      const outcome = await runInMachine(machinery, { sample, options: { arguments: '"a b"' } });
      assert.equal(outcome.result.ended, 'exited');
      assert.ok(sampleOutput(outcome).includes(sample.expect), outcome.log);
      assertNothingLeft(assert.deepEqual, outcome.machineId);
    }
  });

  it('unpacks an encrypted archive and runs the program inside, keeping the unpacked files out of the dropped files', async () => {
    const dir = join(workDir, 'archive-content');
    mkdirSync(dir, { recursive: true });
    writeFileSync(join(dir, 'README.txt'), 'not the sample\n');
    writeFileSync(join(dir, 'tool.c'), '#include <stdio.h>\nint main(void) { FILE *f = fopen("/tmp/from-archive", "w"); fputs("x", f); fclose(f); puts("inner program ran"); return 0; }\n');
    execFileSync('gcc', ['-o', join(dir, 'tool'), join(dir, 'tool.c')]);
    const archive = join(workDir, 'bundle.zip');
    execFileSync('7z', ['a', '-tzip', '-pinfected', archive, join(dir, 'README.txt'), join(dir, 'tool')], { stdio: 'ignore' });
    const outcome = await runInMachine(machinery, { sample: { name: 'bundle.zip', content: readFileSync(archive) } });
    assert.equal(outcome.result.ended, 'exited');
    assert.ok(sampleOutput(outcome).includes('inner program ran'), outcome.log);
    assert.match(outcome.log, /running \/tmp\/unpacked\/tool \(ELF .*\) with package elf/);
    assert.deepEqual(outcome.files.map((file) => file.filepath), ['/tmp/from-archive']);
    assertNothingLeft(assert.deepEqual, outcome.machineId);
  });

  it('opens a URL in chromium on the virtual display and takes screenshots', async () => {
    const page = '<body style="background:#fff"><h1 style="font-size:80px">nestbox screenshot</h1></body>';
    const machineryWithDisplay = testMachinery({ screenshots: true, screenshot_interval: 0.5 });
    await machineryWithDisplay.prepare();
    const outcome = await runInMachine(machineryWithDisplay, { url: `data:text/html,${encodeURIComponent(page)}`, timeoutSeconds: 6 });
    assert.equal(outcome.result.ended, 'timeout');
    assert.match(outcome.log, /analysis package: url/);
    const shots = readdirSync(outcome.paths.shots).sort();
    assert.ok(shots.length >= 2, `shots: ${shots.join(', ')}`);
    assert.equal(shots[0], '0001.jpg');
    const last = readFileSync(join(outcome.paths.shots, shots.at(-1)!));
    assert.deepEqual([...last.subarray(0, 3)], [0xff, 0xd8, 0xff], 'a JPEG');
    // The page drew something: the last shot is far from a black, empty screen.
    const mean = Number(execFileSync('/usr/bin/convert', [join(outcome.paths.shots, shots.at(-1)!), '-format', '%[fx:mean]', 'info:'], { encoding: 'utf8' }));
    assert.ok(mean > 0.3, `mean brightness ${mean}`);
    assert.deepEqual(
      outcome.files.filter((file) => file.path.startsWith('shots/')).map((file) => file.path),
      shots.map((name) => `shots/${name}`),
    );
    assertNothingLeft(assert.deepEqual, outcome.machineId);
  });

  it('starts a file sample without waiting for the display, and still takes screenshots once it is up', async () => {
    const withDisplay = testMachinery({ screenshots: true, screenshot_interval: 0.5 });
    await withDisplay.prepare();
    const outcome = await runInMachine(withDisplay, { sample: { name: 'wait.sh', content: '#!/bin/sh\necho started\nsleep 3\n' } });
    assert.equal(outcome.result.ended, 'exited');
    assert.ok(sampleOutput(outcome).includes('started'));
    assert.ok(readdirSync(outcome.paths.shots).includes('0001.jpg'), outcome.log);
    assertNothingLeft(assert.deepEqual, outcome.machineId);
  });

  it('records no error for a display the sample did not wait for when the sample ends before it is up', async () => {
    const withDisplay = testMachinery({ screenshots: true, screenshot_interval: 0.5 });
    await withDisplay.prepare();
    const outcome = await runInMachine(withDisplay, { sample: { name: 'quick.sh', content: '#!/bin/sh\necho done\n' } });
    assert.equal(outcome.result.ended, 'exited');
    assert.deepEqual(outcome.result.warnings, [], 'a display that was not needed is no task error');
    assert.doesNotMatch(outcome.log, /WARNING/, outcome.log);
    assert.match(outcome.log, /DEBUG: the sample ended before the virtual display was up/, 'the sample did end first (Xvfb needs about 0.1 s)');
    assertNothingLeft(assert.deepEqual, outcome.machineId);
  });

  it('still reports a display that fails while the sample runs', async () => {
    const withDisplay = testMachinery({ screenshots: true, screenshot_interval: 0.5 });
    await withDisplay.prepare();
    const outcome = await runInMachine(withDisplay, {
      sample: { name: 'wait.sh', content: '#!/bin/sh\nsleep 2\n' },
      // Runs before the display is launched (that waits for the sample's start): its sandbox cannot fork.
      during: async (machineId) => noForkingIn(machineId, 'support'),
    });
    assert.equal(outcome.result.ended, 'exited');
    assert.deepEqual(outcome.result.warnings, ['the virtual display did not start: no screenshots'], outcome.log);
    assertNothingLeft(assert.deepEqual, outcome.machineId);
  });

  it('dumps the memory of the sample processes at the end of the run', async () => {
    const marker = `MEMORY-MARKER-${Date.now()}`;
    const outcome = await runInMachine(machinery, {
      memory: true,
      timeoutSeconds: 2,
      sample: { name: 'holder.py', content: `import time\nsecret = "${marker}" * 3\nprint("holding")\nwhile True: time.sleep(1)\n` },
    });
    assert.equal(outcome.result.ended, 'timeout');
    const dumps = outcome.files.filter((file) => file.path.startsWith('memory/'));
    assert.equal(dumps.length, 1, JSON.stringify(outcome.files));
    const dump = readFileSync(join(outcome.paths.dir, dumps[0]!.path));
    assert.ok(dump.includes(marker.repeat(3)), 'the marker is in the dump');
    // Cuckoo's layout: 24-byte headers (address, size, state, type, protect) each followed by the region.
    let offset = 0;
    let regions = 0;
    while (offset < dump.length) {
      const size = dump.readUInt32LE(offset + 8);
      assert.equal(dump.readUInt32LE(offset + 12), 0x1000, 'MEM_COMMIT');
      offset += 24 + size;
      regions++;
    }
    assert.equal(offset, dump.length);
    assert.ok(regions > 5);
    assert.match(dumps[0]!.path, new RegExp(`^memory/${dumps[0]!.pids[0]}\\.dmp$`));
    assertNothingLeft(assert.deepEqual, outcome.machineId);
  });

  it('starts a reboot task from the state the original task left, and runs what it made persistent', async () => {
    const original = await runInMachine(machinery, {
      sample: {
        name: 'persist.sh',
        content: [
          '#!/bin/sh',
          'echo "@reboot root echo came-back > /var/tmp/after-reboot; echo again >> /root/changed.txt" > /etc/cron.d/persist',
          'echo first-run > /root/state.txt',
          'echo first-run > /root/changed.txt',
        ].join('\n'),
      },
    });
    assert.ok(existsSync(rebootStatePath(original.paths)));
    // The kept state holds the machine's host ids, never host root's: root inside owns it again after the reboot.
    const owners = execFileSync('tar', ['-tvf', rebootStatePath(original.paths), '--numeric-owner'], { encoding: 'utf8' });
    const base = linuxSettingsSchema.parse({}).host_id_base;
    const rootFiles = owners.split('\n').filter((entry) => / \.?\/?root\/(state|changed)\.txt$/.test(entry));
    assert.equal(rootFiles.length, 2, owners);
    for (const line of rootFiles) assert.ok(line.includes(` ${base}/${base} `), line);
    const reboot = await runInMachine(machinery, { rebootFrom: original.paths });
    assert.equal(reboot.result.ended, 'exited');
    assert.match(reboot.log, /analysis package: reboot/);
    const dropped = Object.fromEntries(reboot.files.map((file) => [file.filepath, file.path]));
    assert.ok(dropped['/var/tmp/after-reboot'], reboot.log + JSON.stringify(reboot.files));
    assert.equal(readFileSync(join(reboot.paths.dir, dropped['/var/tmp/after-reboot']!), 'utf8'), 'came-back\n');
    // Root inside may change what the original task left.
    assert.equal(readFileSync(join(reboot.paths.dir, dropped['/root/changed.txt']!), 'utf8'), 'first-run\nagain\n');
    // What the original task left is the starting point, not something this run dropped.
    assert.equal(dropped['/root/state.txt'], undefined);
    assertNothingLeft(assert.deepEqual, reboot.machineId);
  });

  /** Nothing named after a task is left on the host: run folders, namespaces, mounts, cgroups. */
  function assertNothingOfTask(taskId: number): void {
    const prefix = `${taskId.toString(36)}_`;
    const ours = (names: string[]) => names.filter((name) => name.includes(prefix));
    assert.deepEqual(ours(runningMachineIds()), []);
    assert.deepEqual(ours(execFileSync('ip', ['netns', 'list'], { encoding: 'utf8' }).split('\n')), []);
    assert.deepEqual(ours(readFileSync('/proc/self/mountinfo', 'utf8').split('\n')), []);
    const layout = detectCgroupLayout();
    assert.deepEqual(ours([layout.v2Base, ...Object.values(layout.v1Base)].flatMap((base) => readdirSync(base))), []);
  }

  const unusualTaskId = () => 46_655 + Math.floor(Math.random() * 10_000);

  it('refuses an unknown package with a clear error and leaves nothing half-made', async () => {
    const taskId = unusualTaskId();
    await assert.rejects(
      runInMachine(machinery, { taskId, package: 'word', sample: { name: 'x.sh', content: 'echo no\n' } }),
      (error: unknown) => isNestboxError(error, 'invalid_input') && /unknown analysis package "word"/.test(error.message),
    );
    assertNothingOfTask(taskId);
  });

  it('fails to start on a route this host cannot give, and undoes the disk and cgroups it made meanwhile', async () => {
    const taskId = unusualTaskId();
    await assert.rejects(runInMachine(machinery, { taskId, route: 'internet', sample: { name: 'x.sh', content: 'echo no\n' } }), (error: unknown) =>
      isNestboxError(error),
    );
    assertNothingOfTask(taskId);
  });

  it('leaves a machine folder alone while another nestbox sets it up, before its owner record exists', async () => {
    const runDir = linuxSettingsSchema.parse({}).run_dir;
    const settingUp = join(runDir, machineId(9_998));
    const crashed = join(runDir, machineId(9_999));
    mkdirSync(settingUp, { recursive: true });
    mkdirSync(crashed, { recursive: true });
    // No process started at tick "gone": the owner it names is not running.
    writeFileSync(join(crashed, 'owner.json'), JSON.stringify({ pid: 1, startTime: 'gone', taskId: 9_999 }));
    try {
      await machinery.cleanupStale();
      assert.equal(existsSync(settingUp), true, 'a folder being set up survives');
      assert.equal(existsSync(crashed), false, 'a folder whose owner is gone is removed');
    } finally {
      rmSync(settingUp, { recursive: true, force: true });
      rmSync(crashed, { recursive: true, force: true });
    }
  });

  it('removes what a crashed nestbox left behind, and nothing of live machines', async () => {
    const script = join(workDir, 'crashing-owner.mjs');
    const support = new URL('../linux-support.js', import.meta.url).href;
    writeFileSync(
      script,
      [
        `import { testMachinery, log } from '${support}';`,
        `import { AnalysisPaths } from '${new URL('../../src/storage/layout.js', import.meta.url).href}';`,
        `import { writeFileSync } from 'node:fs';`,
        `writeFileSync('${workDir}/long.sh', 'while :; do sleep 1; done\\n');`,
        `const machinery = testMachinery();`,
        `const session = await machinery.start({ taskId: 999, machine: { name: 'linux1' }, paths: new AnalysisPaths('${workDir}/crashed'), category: 'file', samplePath: '${workDir}/long.sh', package: '', options: {}, timeoutSeconds: 600, enforceTimeout: false, memory: false, route: 'none', clock: '', log });`,
        `session.run(new AbortController().signal);`,
        `setTimeout(() => console.log(session.id), 500);`,
      ].join('\n'),
    );
    const child = spawn(process.execPath, [script], { stdio: ['ignore', 'pipe', 'inherit'] });
    const id = await new Promise<string>((resolve) => createInterface({ input: child.stdout! }).once('line', resolve));
    child.kill('SIGKILL');
    await new Promise((resolve) => child.once('exit', resolve));
    const left = leftoversOf(id);
    assert.ok(left.mounts!.length > 0 && left.cgroups!.length > 0 && left.runFolders!.length === 1, JSON.stringify(left));
    // A machine of a live owner (this process) running meanwhile must survive the cleanup.
    const live = runInMachine(machinery, { timeoutSeconds: 10, sample: { name: 'live.sh', content: 'sleep 2\necho still-alive\n' } });
    await new Promise((resolve) => setTimeout(resolve, 1000));
    await machinery.cleanupStale();
    assertNothingLeft(assert.deepEqual, id);
    const outcome = await live;
    assert.ok(sampleOutput(outcome).includes('still-alive'), outcome.log);
    assert.equal(outcome.result.ended, 'exited');
  });
});

/** Sets pids.max of a machine's leaf to 0 (synchronously), so nothing started in it can fork. */
function noForkingIn(machineId: string, leaf: 'sample' | 'support'): void {
  for (const procs of new MachineCgroups(detectCgroupLayout(), machineId).procsFiles(leaf)) {
    const pidsMax = join(dirname(procs), 'pids.max');
    if (existsSync(pidsMax)) writeFileSync(pidsMax, '0');
  }
}
