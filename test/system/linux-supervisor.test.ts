import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { after, before, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import type { Machinery } from '../../src/machinery/types.js';
import { assertNothingLeft, closeTestMachineries, type RunOutcome, runInMachine, testMachinery, workDir } from '../linux-support.js';

/**
 * The sample supervisor (native/supervisor.c) on a real linux machine: long sleeps return at once and are
 * recorded, short ones run as asked; files the sample deletes are captured; symlinks and /proc links do
 * not lead it to host files; if it dies, the sample goes on and ends.
 */
const FIXTURES = fileURLToPath(new URL('../../../test/fixtures/', import.meta.url));

function compile(name: string): Buffer {
  const out = join(workDir, name);
  execFileSync('gcc', ['-O1', '-static', '-o', out, join(FIXTURES, `${name}.c`)]);
  return readFileSync(out);
}

/** A 32-bit program with no libc (test/fixtures/supervisor-sleep32.c). */
function compile32(name: string): Buffer {
  const out = join(workDir, name);
  execFileSync('gcc', ['-m32', '-nostdlib', '-static', '-fno-pie', '-no-pie', '-O1', '-o', out, join(FIXTURES, `${name}.c`)]);
  return readFileSync(out);
}

/** Runs a compiled fixture with the elf package and checks that it exited before the timeout. */
async function runProgram(machinery: Machinery, name: string, content: Buffer, args: string, timeoutSeconds: number): Promise<RunOutcome> {
  const outcome = await runInMachine(machinery, {
    sample: { name, content, mode: 0o755 },
    package: 'elf',
    ...(args ? { options: { arguments: args } } : {}),
    timeoutSeconds,
  });
  assert.equal(outcome.result.ended, 'exited');
  return outcome;
}

function supervisorLog(paths: { supervisorLog: string }): Array<Record<string, unknown>> {
  return readFileSync(paths.supervisorLog, 'utf8').split('\n').filter(Boolean).map((line) => JSON.parse(line));
}

/** The pid of the supervisor of machine `id`: its capture folder is in the machine's run folder. */
function supervisorPid(id: string): number | undefined {
  for (const pid of readdirSync('/proc').filter((entry) => /^\d+$/.test(entry))) {
    const cmdline = (() => {
      try {
        return readFileSync(`/proc/${pid}/cmdline`, 'utf8');
      } catch {
        return '';
      }
    })();
    if (cmdline.includes(`/${id}/captured\0`)) return Number(pid);
  }
  return undefined;
}

describe('linux machine: the sample supervisor', { timeout: 300_000 }, () => {
  after(closeTestMachineries);
  let machinery: Machinery;
  /** A threshold of 2 s: waits on never-ready descriptors end after 2 s. */
  let quickMachinery: Machinery;
  before(async () => {
    machinery = testMachinery({ sleep_skip_threshold: 10 });
    quickMachinery = testMachinery({ sleep_skip_threshold: 2 });
    await machinery.prepare();
    await quickMachinery.prepare();
  });

  it('ends a sleep to an absolute deadline past the timeout at once, records it, and lets a short sleep run', async () => {
    const outcome = await runProgram(machinery, 'abs-sleep', compile('supervisor-abs-sleep'), '60', 20);
    const mark = outcome.files.find((file) => file.filepath === '/tmp/after-abs-sleep');
    assert.ok(mark?.path, JSON.stringify(outcome.files));
    const slept = Number(/short sleep ([\d.]+)/.exec(readFileSync(join(outcome.paths.dir, mark.path), 'utf8'))?.[1]);
    assert.ok(slept >= 0.19, `the 0.2 s sleep ran as asked (${slept} s)`);
    const sleeps = supervisorLog(outcome.paths).filter((line) => line.event === 'sleep');
    assert.equal(sleeps.length, 1, JSON.stringify(sleeps));
    assert.equal(sleeps[0]!.call, 'clock_nanosleep');
    assert.ok(Number(sleeps[0]!.seconds) > 50 && Number(sleeps[0]!.seconds) <= 60, String(sleeps[0]!.seconds));
    assert.match(outcome.log, /\[supervisor\] INFO: process \d+ asked to sleep [\d.]+ s \(clock_nanosleep\): the sleep returned at once/);
    assertNothingLeft(assert.deepEqual, outcome.machineId);
  });

  it('ends a 32-bit sleep (int 0x80, both time layouts) at once and records it', async () => {
    const outcome = await runProgram(machinery, 'sleep32', compile32('supervisor-sleep32'), '', 30);
    assert.ok(outcome.files.some((file) => file.filepath === '/tmp/after-sleep32'), JSON.stringify(outcome.files));
    const sleeps = supervisorLog(outcome.paths).filter((line) => line.event === 'sleep');
    assert.deepEqual(sleeps.map((line) => [line.call, line.seconds]), [['nanosleep', 180], ['clock_nanosleep', 180]]);
  });

  it('captures a deleted file, and no link the sample lays leads it to a host file', async () => {
    const secret = `host secret ${process.pid} ${Date.now()}\n`;
    const hostFile = join('/tmp', `nestbox-supervisor-secret-${process.pid}`);
    writeFileSync(hostFile, secret);
    try {
      // Each trick names the host file (absolute, relative, through /proc's links) and is deleted or run.
      const script = `#!/bin/sh
echo "the sample's own" > /tmp/written-then-deleted && rm /tmp/written-then-deleted
mkdir -p /tmp/a/b && cd /tmp/a/b
ln -s ${hostFile} /tmp/abs-link; /tmp/abs-link; rm /tmp/abs-link
ln -s ../../../../../../../..${hostFile} /tmp/rel-link; /tmp/rel-link; rm /tmp/rel-link
/proc/self/root${hostFile}; /proc/1/root${hostFile}; /proc/self/cwd/../../../../..${hostFile}
rm -f /proc/self/root${hostFile} ../../../../..${hostFile}
ln -s /proc/1/root${hostFile} /tmp/proc-link; /tmp/proc-link; rm /tmp/proc-link
cd /proc/self && ./root${hostFile}
true
`;
      const outcome = await runInMachine(machinery, { sample: { name: 'links.sh', content: script }, timeoutSeconds: 30 });
      assert.equal(readFileSync(hostFile, 'utf8'), secret, 'the host file is untouched');
      const deleted = outcome.files.find((file) => file.filepath === '/tmp/written-then-deleted');
      assert.ok(deleted?.path, `the deleted file was captured: ${JSON.stringify(outcome.files)}`);
      assert.equal(readFileSync(join(outcome.paths.dir, deleted.path), 'utf8'), "the sample's own\n");
      for (const name of readdirSync(outcome.paths.files)) {
        assert.notEqual(readFileSync(join(outcome.paths.files, name), 'utf8'), secret, `${name} holds the host file`);
      }
      assert.ok(!JSON.stringify(supervisorLog(outcome.paths)).includes('secret'), 'nothing of the host file was captured');
      assertNothingLeft(assert.deepEqual, outcome.machineId);
    } finally {
      rmSync(hostFile, { force: true });
    }
  });

  it('captures programs run from /dev/shm and stock programs the sample changed, not those it left alone', async () => {
    const script = `#!/bin/sh
cp /usr/bin/true /dev/shm/runner && /dev/shm/runner
printf '\\n# changed' >> /usr/bin/tac && /usr/bin/tac </dev/null; rm -f /usr/bin/tac
/usr/bin/ls / >/dev/null; /bin/true; cat /dev/null
`;
    const outcome = await runInMachine(machinery, { sample: { name: 'stock.sh', content: script }, timeoutSeconds: 30 });
    const paths = outcome.files.map((file) => file.filepath);
    assert.ok(paths.includes('/dev/shm/runner'), JSON.stringify(paths));
    assert.ok(paths.includes('/usr/bin/tac'), JSON.stringify(paths));
    const tac = outcome.files.find((file) => file.filepath === '/usr/bin/tac')!;
    assert.ok(readFileSync(join(outcome.paths.dir, tac.path)).toString('latin1').endsWith('\n# changed'));
    for (const stock of ['/usr/bin/ls', '/bin/true', '/usr/bin/true', '/usr/bin/cat', '/usr/bin/cp', '/usr/bin/rm', '/bin/sh', '/usr/bin/dash', '/bin/bash']) {
      assert.ok(!paths.includes(stock), `${stock} is the guest root's, unchanged: ${JSON.stringify(paths)}`);
    }
    const captured = supervisorLog(outcome.paths).filter((line) => line.event === 'capture');
    assert.deepEqual(captured.map((line) => line.filepath).sort(), ['/dev/shm/runner', '/usr/bin/tac']);
  });

  it('does not hang the sample when the supervisor dies', async () => {
    const script = `#!/bin/sh
sleep 3
echo a > /tmp/before-death
sleep 30
/bin/true
echo b > /tmp/after-death
`;
    const outcome = await runInMachine(machinery, {
      sample: { name: 'outlive.sh', content: script },
      timeoutSeconds: 120,
      during: async (id) => {
        let pid: number | undefined;
        while (!(pid = supervisorPid(id))) await sleep(50);
        await sleep(1000);
        process.kill(pid, 'SIGKILL');
      },
    });
    assert.equal(outcome.result.ended, 'exited', 'the sample ended before the timeout');
    assert.ok(outcome.files.some((file) => file.filepath === '/tmp/after-death'), JSON.stringify(outcome.files));
    assert.match(outcome.log, /the supervisor stopped \(SIGKILL\)/);
    assertNothingLeft(assert.deepEqual, outcome.machineId);
  });

  it('fires long timers early, ends waits on nothing at once and on never-ready pipes at the threshold; real ones run as asked', async () => {
    const outcome = await runProgram(quickMachinery, 'time-evasions', compile('supervisor-time-evasions'), '60', 50);
    assert.ok(outcome.files.some((file) => file.filepath === '/tmp/after-time-evasions'), outcome.log);
    const lines = evasionLines(outcome);
    const waited = (name: string) => lines.get(name)?.waited ?? NaN;
    for (const timer of ['alarm', 'setitimer', 'timer_settime', 'timerfd_settime']) {
      assert.ok(waited(timer) >= 0.9 && waited(timer) < 1.8, `${timer} fired after ${waited(timer)} s`);
    }
    assert.equal(lines.get('timerfd_settime')?.result, 1, 'the timerfd read one expiry');
    for (const nothing of ['select-nothing', 'pselect6-nothing', 'poll-nothing', 'ppoll-nothing', 'epoll_wait-empty']) {
      assert.ok(waited(nothing) < 0.5, `${nothing} took ${waited(nothing)} s`);
      assert.equal(lines.get(nothing)?.result, 0, `${nothing} timed out`);
    }
    for (const pipe of ['select-pipe', 'poll-pipe', 'epoll_pwait-pipe', 'epoll_pwait2-pipe']) {
      assert.ok(waited(pipe) >= 1.9 && waited(pipe) < 3, `${pipe} took ${waited(pipe)} s`);
      assert.equal(lines.get(pipe)?.result, 0, `${pipe} timed out with nothing ready`);
    }
    assert.ok(waited('short-setitimer') >= 0.29 && waited('short-setitimer') < 1, `a 0.3 s itimer: ${waited('short-setitimer')} s`);
    assert.ok(waited('short-poll') >= 0.29 && waited('short-poll') < 1, `a 0.3 s poll: ${waited('short-poll')} s`);
    assert.ok(waited('ready-poll') >= 0.9 && waited('ready-poll') < 1.9, `a poll a child ends after 1 s: ${waited('ready-poll')} s`);
    assert.equal(lines.get('ready-poll')?.result, 11, 'it returned the ready pipe');
    // glibc's select is pselect6 on x86_64.
    const recorded = supervisorLog(outcome.paths).filter((line) => line.event === 'sleep').map((line) => [line.call, line.seconds]);
    assert.deepEqual(recorded, [
      ['alarm', 60], ['setitimer', 60], ['timer_settime', 60], ['timerfd_settime', 60],
      ['pselect6', 60], ['pselect6', 60], ['pselect6', 60], ['poll', 60], ['poll', 60], ['ppoll', 60],
      ['epoll_wait', 60], ['epoll_pwait', 60], ['epoll_pwait2', 60],
    ]);
    assert.match(outcome.log, /process \d+ set a timer of 60 s \(alarm\): it fired early/);
    assertNothingLeft(assert.deepEqual, outcome.machineId);
  });
});

/** Each line of /tmp/time-evasions.txt (test/fixtures/supervisor-time-evasions.c): seconds waited and the call's result. */
function evasionLines(outcome: RunOutcome): Map<string, { waited: number; result: number }> {
  const log = outcome.files.find((file) => file.filepath === '/tmp/time-evasions.txt');
  assert.ok(log?.path, JSON.stringify(outcome.files));
  const lines = readFileSync(join(outcome.paths.dir, log.path), 'utf8').trim().split('\n');
  return new Map(lines.map((line) => {
    const [name, waited, result] = line.split(' ');
    return [name!, { waited: Number(waited), result: Number(result) }];
  }));
}
