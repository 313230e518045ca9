import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { pino } from 'pino';
import type { BehaviorEvent } from '../../src/report/events.js';
import { MonitorProgram } from '../../src/machinery/host/tracer/index.js';
import { createTestCgroup, ofKind, readEvents, runInCgroup, type TestCgroup } from '../fixtures/tracer-harness.js';

/**
 * The linux machine keeps one eBPF program for task after task (compiling one costs seconds of CPU):
 * each session must hold its own sandbox's behaviour and nothing of another's. The program also holds
 * back descriptor copies made with fcntl until they matter: what goes through them must still be named.
 */
const PYTHON = '/usr/bin/python3';
describe('one eBPF program serving analysis after analysis', { timeout: 240_000 }, () => {
  const log = pino({ level: 'silent' });
  const cgroups: TestCgroup[] = [];
  let work: string;
  let program: MonitorProgram;

  before(async () => {
    work = await mkdtemp(join(tmpdir(), 'nestbox-tracer-reuse-'));
    program = await MonitorProgram.launch(log);
  });

  after(async () => {
    await program?.discard();
    for (const cgroup of cgroups) await cgroup.remove();
    if (work) await rm(work, { recursive: true, force: true });
  });

  async function session(name: string, argv: string[]): Promise<{ events: BehaviorEvent[]; armMs: number; lost: number; cgroup: TestCgroup }> {
    const cgroup = await createTestCgroup();
    cgroups.push(cgroup);
    const eventsPath = join(work, `${name}.jsonl`);
    const t0 = performance.now();
    const traced = await program.arm({ cgroupV2Path: cgroup.path, eventsPath, log });
    const armMs = performance.now() - t0;
    const run = await runInCgroup(cgroup.path, argv);
    assert.equal(run.code, 0, run.stderr);
    const { lost } = await traced.stop();
    return { events: await readEvents(eventsPath), armMs, lost, cgroup };
  }

  it("records each sandbox in its own session, and nothing of the first one's processes in the second", async () => {
    // The first sandbox leaves a process behind that keeps opening its marker file while the second is traced.
    const first = await session('first', ['sh', '-c', `(while :; do cat ${join(work, 'first-marker')}; sleep 0.01; done) >/dev/null 2>&1 </dev/null & cat /etc/hostname`]);
    const second = await session('second', ['sh', '-c', `cat /etc/hostname ${join(work, 'second-marker')} 2>/dev/null; sleep 0.3; exit 0`]);
    const opened = (events: BehaviorEvent[]) => ofKind(events, 'file.open').map((e) => e.path);
    assert.ok(opened(first.events).includes(join(work, 'first-marker')), 'the first session saw its loop');
    assert.ok(opened(second.events).includes(join(work, 'second-marker')), 'the second session saw its own process');
    assert.deepEqual(second.events.filter((e) => JSON.stringify(e).includes('first-marker')), [], 'nothing of the first sandbox');
    assert.deepEqual(first.events.filter((e) => JSON.stringify(e).includes('second-marker')), [], 'nothing of the second sandbox');
    assert.equal(first.lost + second.lost, 0);
    assert.ok(second.armMs < 1000, `arming again took ${second.armMs.toFixed(0)} ms`);
    assert.ok(program.usable, 'the program waits for the next analysis');
  });

  it('names what goes through fcntl copies of descriptors, printed only when they are used', async () => {
    const dir = join(work, 'dups');
    const script = [
      'import os, fcntl',
      `os.makedirs(${JSON.stringify(dir)}, exist_ok=True)`,
      `open(${JSON.stringify(join(dir, 'inside.txt'))}, 'w').close()`,
      // find's pattern: copy, fstat, close, thousands of times (nothing to record).
      `d = os.open(${JSON.stringify(dir)}, os.O_RDONLY | os.O_DIRECTORY)`,
      'for _ in range(200):',
      '    c = fcntl.fcntl(d, fcntl.F_DUPFD_CLOEXEC, 0); os.fstat(c); os.close(c)',
      // A relative open through a copy of the folder's descriptor.
      'c = fcntl.fcntl(d, fcntl.F_DUPFD_CLOEXEC, 0)',
      "os.close(os.open('inside.txt', os.O_RDONLY, dir_fd=c)); os.close(c)",
      // Writes through a copy, then the original and the copy closed.
      `f = os.open(${JSON.stringify(join(dir, 'written.txt'))}, os.O_WRONLY | os.O_CREAT, 0o644)`,
      'w = fcntl.fcntl(f, fcntl.F_DUPFD, 20)',
      "os.write(w, b'x' * 123); os.close(f); os.close(w)",
    ].join('\n');
    const { events, lost } = await session('dups', [PYTHON, '-c', script]);
    assert.equal(lost, 0);
    const opens = ofKind(events, 'file.open').map((e) => e.path);
    assert.equal(opens.filter((path) => path === join(dir, 'inside.txt')).length, 2, 'created, then opened through the copy');
    const writes = ofKind(events, 'file.write').filter((e) => e.bytes === 123);
    assert.deepEqual(writes.map((e) => e.path), [join(dir, 'written.txt')]);
  });

  it('refuses a second session while one records', async () => {
    const cgroup = await createTestCgroup();
    cgroups.push(cgroup);
    const first = await program.arm({ cgroupV2Path: cgroup.path, eventsPath: join(work, 'busy.jsonl'), log });
    await assert.rejects(program.arm({ cgroupV2Path: cgroup.path, eventsPath: join(work, 'busy-2.jsonl'), log }), /cannot be armed/);
    await first.stop();
    assert.ok(program.usable);
  });
});
