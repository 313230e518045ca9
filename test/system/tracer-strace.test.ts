import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { pino } from 'pino';
import type { BehaviorEvent, EventKind } from '../../src/report/events.js';
import { createTracer } from '../../src/machinery/host/tracer/index.js';
import {
  ACCENTED_NAME, assertTourSeenByEveryTracer, LONG_NAME, NEWLINE_NAME, ofKind, openTracerWorkbench, readEvents, runInCgroup,
  type RunResult, type TracerWorkbench,
} from '../fixtures/tracer-harness.js';

/** One line of sh: each argument single-quoted. */
const shellLine = (argv: string[]) => argv.map((arg) => `'${arg.replaceAll("'", `'\\''`)}'`).join(' ');

describe('strace fallback tracer (real strace, real cgroup)', { timeout: 120_000 }, () => {
  const log = pino({ level: 'silent' });
  let bench: TracerWorkbench;
  let work: string;
  let eventsPath: string;
  let events: BehaviorEvent[];
  let port: number;
  let shell: RunResult;
  let ptraceCheck: RunResult;
  let memfd: RunResult;
  let tour: RunResult;
  let wrapped: string[];

  before(async () => {
    bench = await openTracerWorkbench('nestbox-tracer-strace-');
    ({ work, eventsPath } = bench);
    port = bench.listener.port;
    const session = await createTracer(log, { prefer: 'strace' }).start({ cgroupV2Path: bench.cgroup.path, eventsPath, log });
    assert.equal(session.name, 'strace');
    assert.ok(session.wrap, 'the fallback must launch the sample itself');

    // One strace runs everything, as it would run the sample's first process.
    const { shell: shellArgv, ptraceCheck: ptraceArgv, memfd: memfdArgv, mkdirTour, tour: tourArgv } = bench.workloads;
    await writeFile(join(work, 'all.sh'), [shellArgv, ptraceArgv, memfdArgv, mkdirTour, tourArgv].map(shellLine).join('\n'));
    wrapped = session.wrap(['sh', join(work, 'all.sh')]);
    const all = await runInCgroup(bench.cgroup.path, wrapped);
    assert.equal(all.code, 0, all.stderr);
    assert.equal(all.stdout, 'memfd-ran from memory\n');
    assert.deepEqual(await session.stop(), { lost: 0 });
    events = await readEvents(eventsPath);
    const root = ofKind(events, 'process.exec').find((e) => e.argv[1] === join(work, 'all.sh'))!;
    const childOf = (argv0: string) => ofKind(events, 'process.exec').find((e) => e.ppid === root.pid && e.argv[0]?.endsWith(argv0) && e.ret === 0);
    const asRun = (exec: BehaviorEvent | undefined): RunResult => ({ pid: exec?.pid ?? -1, code: null, stdout: '', stderr: '' });
    shell = asRun(childOf('bash'));
    ptraceCheck = asRun(childOf('tracer-ptrace-check'));
    memfd = asRun(childOf('tracer-memfd-exec'));
    tour = asRun(childOf('tracer-tour'));
  });

  after(async () => {
    await bench?.remove();
  });

  it('wraps the sample in strace, with seccomp filtering when strace has it', () => {
    assert.equal(wrapped[0], 'strace');
    assert.ok(wrapped.includes('-f'));
    assert.deepEqual(wrapped.slice(-3), ['--', 'sh', join(work, 'all.sh')]);
    assert.ok(!existsSync(`${eventsPath}.strace`), 'the raw strace log is removed once decoded');
  });

  it('says which tracer ran', () => {
    assert.equal(ofKind(events, 'tracer.info')[0]?.tracer, 'strace');
  });

  it('gives the shell script the same event kinds as the eBPF tracer', () => {
    assert.ok(shell.pid > 0, 'the shell was found');
    const family = new Set([shell.pid]);
    for (const fork of ofKind(events, 'process.fork')) if (family.has(fork.pid)) family.add(fork.child);
    const kinds = new Set(events.filter((e) => family.has(e.pid)).map((e) => e.kind));
    const expected: EventKind[] = [
      'process.fork',
      'process.exec',
      'process.exit',
      'file.open',
      'file.write',
      'file.rename',
      'file.chmod',
      'file.mkdir',
      'file.rmdir',
      'file.link',
      'file.delete',
      'net.socket',
      'net.connect',
      'net.send',
      'memory.exec_map',
    ];
    assert.deepEqual(expected.filter((kind) => !kinds.has(kind)), []);
    const writes = ofKind(events, 'file.write').filter((e) => e.pid === shell.pid && e.path === join(work, 'a.txt'));
    assert.deepEqual(writes.map((e) => e.bytes), [5, 5]);
    const written = ofKind(events, 'file.write').filter((e) => e.pid === shell.pid).map((e) => e.path);
    for (const name of [join(LONG_NAME, LONG_NAME, 'deep.txt'), ACCENTED_NAME, NEWLINE_NAME]) {
      assert.ok(written.includes(join(work, name)), `${name} not in ${written}`);
    }
    const rename = ofKind(events, 'file.rename').find((e) => family.has(e.pid));
    assert.deepEqual(rename && [rename.from, rename.to], [join(work, 'a.txt'), join(work, 'b.txt')]);
    const echo = ofKind(events, 'process.exec').find((e) => e.path === '/bin/echo' && e.ppid === shell.pid);
    assert.deepEqual(echo?.argv, ['/bin/echo', 'arg one', 'two']);
    assert.equal(echo.comm, 'echo');
    assert.ok(ofKind(events, 'process.exit').some((e) => e.ppid === shell.pid && e.code === 3));
    // Name-service lookups may connect a unix socket first (nscd, systemd-userdb): take the TCP one.
    const connect = ofKind(events, 'net.connect').find((e) => e.pid === shell.pid && e.family === 'inet');
    assert.deepEqual(connect && [connect.family, connect.address, connect.port, connect.ret], ['inet', '127.0.0.1', port, 0]);
    const sent = ofKind(events, 'net.send').filter((e) => e.pid === shell.pid && e.family === 'inet');
    assert.deepEqual(sent.map((e) => [e.address, e.port, e.bytes]), [['127.0.0.1', port, 18]]);
  });

  it('cannot hide from PTRACE_TRACEME: the anti-debugging sample keeps quiet', () => {
    assert.ok(!existsSync(join(work, 'misbehaved')), 'under strace the sample sees the debugger');
    const call = ofKind(events, 'process.ptrace').find((e) => e.pid === ptraceCheck.pid);
    assert.deepEqual(call && [call.request, call.ret], [0, -1]);
  });

  it('records memfd_create and the exec from it', () => {
    assert.equal(ofKind(events, 'memory.memfd').find((e) => e.pid === memfd.pid)?.name, 'nestbox-payload');
    const exec = ofKind(events, 'process.exec').find((e) => e.pid === memfd.pid && e.argv[0] === '/bin/echo');
    assert.deepEqual(exec && [exec.path, exec.argv, exec.ret], ['memfd:nestbox-payload', ['/bin/echo', 'memfd-ran', 'from memory'], 0]);
  });

  it('decodes the syscall tour as the eBPF tracer does', () => {
    assert.ok(tour.pid > 0, 'the tour was found');
    assertTourSeenByEveryTracer(events, { pid: tour.pid, dir: join(work, 'tour'), port });
  });
});
