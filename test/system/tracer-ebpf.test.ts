import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { pino } from 'pino';
import type { BehaviorEvent } from '../../src/report/events.js';
import { createTracer, MonitorProgram, type BehaviourTracer } from '../../src/machinery/host/tracer/index.js';
import {
  ACCENTED_NAME, assertTourSeenByEveryTracer, compileFixtures, createTestCgroup, LONG_NAME, NEWLINE_NAME, ofKind, openTracerWorkbench, readEvents, runInCgroup,
  type RunResult, type TestCgroup, type TracerWorkbench,
} from '../fixtures/tracer-harness.js';

const LOOP_OPENS = 5000;

describe('eBPF behaviour tracer (the monitor on tracepoints, real cgroup)', { timeout: 240_000 }, () => {
  const log = pino({ level: 'silent' });
  let tracer: BehaviourTracer;
  let bench: TracerWorkbench;
  let work: string;
  let events: BehaviorEvent[];
  let lost: number;
  let startMs: number;
  let shell: RunResult;
  let ptraceCheck: RunResult;
  let memfd: RunResult;
  let tour: RunResult;
  let loop: RunResult;
  let mkdirTour: RunResult;
  let outsider: RunResult;
  let outsiderMarker: string;
  let port: number;
  let bytesReceived: number;

  before(async () => {
    bench = await openTracerWorkbench('nestbox-tracer-work-', ['tracer-open-loop']);
    ({ work } = bench);
    port = bench.listener.port;
    tracer = createTracer(log, { keepWarm: false });
    assert.equal(await tracer.kind(), 'ebpf', 'eBPF tracing must work on the test machine');
    // Prepared ahead, as the service does: start() then only arms the waiting program.
    await tracer.prepare();
    const t0 = performance.now();
    const session = await tracer.start({ cgroupV2Path: bench.cgroup.path, eventsPath: bench.eventsPath, log });
    startMs = performance.now() - t0;
    assert.equal(session.name, 'ebpf');
    assert.equal(session.wrap, undefined, 'the eBPF tracer watches from outside: nothing to wrap');

    const inCgroup = (argv: string[]) => runInCgroup(bench.cgroup.path, argv);
    shell = await inCgroup(bench.workloads.shell);
    ptraceCheck = await inCgroup(bench.workloads.ptraceCheck);
    memfd = await inCgroup(bench.workloads.memfd);
    mkdirTour = await inCgroup(bench.workloads.mkdirTour);
    tour = await inCgroup(bench.workloads.tour);
    loop = await inCgroup([bench.bin['tracer-open-loop']!, String(LOOP_OPENS), join(work, 'script.sh')]);
    outsiderMarker = join(work, 'outsider-was-here');
    outsider = await runInCgroup(null, ['touch', outsiderMarker]);

    ({ lost } = await session.stop());
    bytesReceived = bench.listener.received();
    events = await readEvents(bench.eventsPath);
  });

  after(async () => {
    await tracer?.close();
    await bench?.remove();
  });

  it('starts a prepared program in well under a second', () => {
    assert.ok(startMs < 1000, `start() took ${startMs.toFixed(0)} ms`);
  });

  it('says which tracer ran', () => {
    const info = ofKind(events, 'tracer.info');
    assert.equal(info[0]?.tracer, 'ebpf');
    assert.equal(events[0]?.kind, 'tracer.info');
  });

  it('records the shell script: writes, rename, chmod, mkdir/rmdir, symlink, deletes', () => {
    assert.equal(shell.code, 0, shell.stderr);
    const mine = events.filter((e) => e.pid === shell.pid);
    const writes = ofKind(mine, 'file.write').filter((e) => e.path === join(work, 'a.txt'));
    assert.deepEqual(writes.map((w) => w.bytes), [5, 5], 'one total per opened fd, not one event per write()');
    const created = ofKind(mine, 'file.open').find((e) => e.path === join(work, 'a.txt'));
    assert.ok(created && created.ret >= 0 && (created.flags & 0o100) !== 0, 'a.txt opened with O_CREAT');

    const children = events.filter((e) => e.ppid === shell.pid);
    const rename = ofKind(children, 'file.rename')[0];
    assert.deepEqual(rename && [rename.from, rename.to, rename.ret], [join(work, 'a.txt'), join(work, 'b.txt'), 0]);
    const chmod = ofKind(children, 'file.chmod').find((e) => e.path === join(work, 'b.txt'));
    assert.equal(chmod?.mode, 0o600);
    assert.equal(ofKind(children, 'file.mkdir').find((e) => e.path === join(work, 'd'))?.ret, 0);
    assert.equal(ofKind(children, 'file.rmdir').find((e) => e.path === join(work, 'd'))?.ret, 0);
    const link = ofKind(children, 'file.link')[0];
    assert.deepEqual(link && [link.from, link.to, link.symbolic, link.ret], ['b.txt', join(work, 'l'), true, 0]);
    const written = ofKind(mine, 'file.write').map((e) => [e.path, e.bytes]);
    assert.deepEqual(
      written.filter(([path]) => path !== join(work, 'a.txt') && path !== '/dev/null'),
      [
        [join(work, LONG_NAME, LONG_NAME, 'deep.txt'), 5],
        [join(work, ACCENTED_NAME), 8],
        [join(work, NEWLINE_NAME), 2],
      ],
      'long paths, non-ASCII names and names with newlines come out whole',
    );
    const deleted = ofKind(children, 'file.delete').map((e) => e.path);
    assert.ok(deleted.includes(join(work, 'l')) && deleted.includes(join(work, 'b.txt')), `deleted: ${deleted}`);
  });

  it('records children with their argv, parent and exit code', () => {
    const forks = ofKind(events, 'process.fork').filter((e) => e.pid === shell.pid).map((e) => e.child);
    const echo = ofKind(events, 'process.exec').find((e) => e.path === '/bin/echo' && e.ret === 0);
    assert.ok(echo, 'exec of /bin/echo recorded');
    assert.deepEqual(echo.argv, ['/bin/echo', 'arg one', 'two']);
    assert.equal(echo.ppid, shell.pid);
    assert.ok(forks.includes(echo.pid), 'the fork that made the echo process is recorded');
    assert.equal(echo.comm, 'echo');
    const exit3 = ofKind(events, 'process.exit').find((e) => e.ppid === shell.pid && e.code === 3);
    assert.ok(exit3, 'sh -c "exit 3" exit code');
    assert.equal(ofKind(events, 'process.exit').find((e) => e.pid === shell.pid)?.code, 0);
  });

  it('decodes the TCP connection to 127.0.0.1 and totals what was sent', () => {
    const connect = ofKind(events, 'net.connect').find((e) => e.pid === shell.pid && e.family === 'inet');
    assert.ok(connect, 'connect recorded');
    assert.deepEqual([connect.address, connect.port, connect.ret], ['127.0.0.1', port, 0]);
    // bash writes through a copy of the socket (printf >&3 writes to fd 1 after dup2(3, 1)).
    // Each send is a record of its own (bash may write the line in more than one call).
    const sent = ofKind(events, 'net.send').filter((e) => e.pid === shell.pid && e.family === 'inet');
    assert.deepEqual([...new Set(sent.map((e) => `${e.address}:${e.port}`))], [`127.0.0.1:${port}`]);
    assert.equal(sent.reduce((sum, e) => sum + e.bytes, 0), 18);
    assert.equal(bytesReceived >= 18, true, 'the listener got the request');
    // The resolver may open and close a unix socket on the same fd number first (nscd, systemd-userdb).
    const before = events.slice(0, events.indexOf(connect));
    const socket = ofKind(before, 'net.socket').filter((e) => e.pid === shell.pid && e.ret === connect.fd).at(-1);
    assert.equal(socket?.family, 'inet');
  });

  it('is invisible to PTRACE_TRACEME: the anti-debugging sample misbehaves, and the call is recorded', () => {
    assert.equal(ptraceCheck.code, 0, 'PTRACE_TRACEME succeeded under the eBPF tracer');
    assert.ok(existsSync(join(work, 'misbehaved')), 'the sample wrote its marker');
    const call = ofKind(events, 'process.ptrace').find((e) => e.pid === ptraceCheck.pid);
    assert.deepEqual(call && [call.request, call.ret], [0, 0]);
    assert.ok(ofKind(events, 'file.write').some((e) => e.pid === ptraceCheck.pid && e.path === join(work, 'misbehaved')));
  });

  it('records memfd_create and the exec from the memfd', () => {
    assert.equal(memfd.code, 0, memfd.stderr);
    assert.equal(memfd.stdout, 'memfd-ran from memory\n');
    const created = ofKind(events, 'memory.memfd').find((e) => e.pid === memfd.pid);
    assert.equal(created?.name, 'nestbox-payload');
    assert.ok(created.ret >= 0);
    const exec = ofKind(events, 'process.exec').find((e) => e.pid === memfd.pid && e.ret === 0 && e.argv[0] === '/bin/echo');
    assert.equal(exec?.path, 'memfd:nestbox-payload');
    assert.deepEqual(exec.argv, ['/bin/echo', 'memfd-ran', 'from memory']);
    assert.ok(ofKind(events, 'file.write').some((e) => e.pid === memfd.pid && e.path === 'memfd:nestbox-payload' && e.bytes > 10_000));
  });

  it('decodes the syscall tour: renames, links, sockets of three families, exec mappings, modules, ids, signals', () => {
    assert.equal(tour.code, 0, tour.stderr);
    const mine = events.filter((e) => e.pid === tour.pid);
    const dir = join(work, 'tour');
    assertTourSeenByEveryTracer(events, { pid: tour.pid, dir, port });
    // What only the eBPF tracer sees: open_how, fchmod/fchown by fd, directory calls, return values, module names.
    const opened = ofKind(mine, 'file.open').find((e) => e.path === join(dir, 'sub/two words.txt'));
    assert.deepEqual(opened && [opened.flags & 0o101, opened.mode], [0o101, 0o640], 'openat2 flags and mode from open_how');
    assert.ok(ofKind(mine, 'file.chmod').some((e) => e.path === join(dir, 'sub/two words.txt') && e.mode === 0o600), 'fchmod names the file');
    assert.ok(ofKind(mine, 'file.chown').some((e) => e.path === join(dir, 'sub/renamed.txt') && e.uid === 0 && e.gid === 0));
    assert.ok(ofKind(mine, 'file.rmdir').some((e) => e.path === join(dir, 'sub') && e.ret === 0));
    assert.ok(ofKind(mine, 'file.mkdir').some((e) => e.path === join(dir, 'sub') && e.mode === 0o750));
    assert.deepEqual(ofKind(mine, 'file.link').map((e) => e.ret), [0, 0]);
    assert.equal(ofKind(mine, 'net.connect').find((e) => e.family === 'unix')?.ret, -2);
    const maps = ofKind(mine, 'memory.exec_map');
    assert.ok(maps.some((e) => e.call === 'mmap' && e.prot === 7 && e.path === undefined), 'anonymous RWX mapping');
    assert.ok(maps.some((e) => e.call === 'mprotect' && e.prot === 5 && e.length === 4096));
    assert.ok(maps.some((e) => e.call === 'mmap' && e.path?.includes('libc.so')), 'libraries mapped executable, with their path');
    assert.deepEqual(ofKind(mine, 'module.load').map((e) => e.path), [undefined, 'nestbox_none']);
    assert.deepEqual(ofKind(mine, 'process.setid').map((e) => e.ret), [0, 0]);
    assert.deepEqual(ofKind(mine, 'process.kill').map((e) => e.ret), [0]);
  });

  it('records nothing of processes outside the cgroup', () => {
    assert.ok(existsSync(outsiderMarker));
    const mentions = events.filter((e) => JSON.stringify(e).includes('outsider-was-here'));
    assert.deepEqual(mentions, []);
    // Every event comes from a process started in the cgroup or from one of their descendants.
    const inside = new Set([shell, ptraceCheck, memfd, mkdirTour, tour, loop].map((r) => r.pid));
    for (const fork of ofKind(events, 'process.fork')) inside.add(fork.child);
    assert.ok(!inside.has(outsider.pid));
    const strangers = events.filter((e) => e.kind !== 'tracer.info' && !inside.has(e.pid));
    assert.deepEqual(strangers, []);
  });

  it(`loses nothing: all ${LOOP_OPENS} opens of the loop are there, and no loss was reported`, () => {
    assert.equal(loop.code, 0);
    const opens = ofKind(events, 'file.open').filter((e) => e.pid === loop.pid && e.path === join(work, 'script.sh'));
    // The loop's identical opens are folded: each event counts the repeats it stands for.
    assert.equal(opens.reduce((sum, e) => sum + 1 + (e.repeated ?? 0), 0), LOOP_OPENS);
    assert.ok(opens.length < LOOP_OPENS / 10, `${opens.length} events for ${LOOP_OPENS} opens`);
    assert.equal(lost, 0);
    assert.deepEqual(ofKind(events, 'tracer.lost'), []);
  });

  it('writes events in time order with the header every event needs', () => {
    for (let i = 1; i < events.length; i++) {
      assert.ok(events[i]!.ts >= events[i - 1]!.ts, `event ${i} goes back in time`);
    }
    for (const e of events.slice(1)) {
      assert.ok(e.pid > 0 && e.tid > 0 && typeof e.comm === 'string' && e.ts > 1.6e9, JSON.stringify(e));
    }
  });
});

describe('eBPF tracer when its buffer overflows', { timeout: 240_000 }, () => {
  const log = pino({ level: 'silent' });
  let cgroup: TestCgroup;
  let work: string;

  before(async () => {
    work = await mkdtemp(join(tmpdir(), 'nestbox-tracer-lost-'));
    cgroup = await createTestCgroup();
  });

  after(async () => {
    await cgroup?.remove();
    if (work) await rm(work, { recursive: true, force: true });
  });

  it('reports every dropped record: as tracer.lost events and in what stop() returns', async () => {
    const bin = await compileFixtures(['tracer-open-loop'], work);
    // A one-page ring buffer holds a few dozen records: a burst of 20 000 opens cannot fit.
    const program = await MonitorProgram.launch(log, { ringBytes: 4096 });
    const eventsPath = join(work, 'events.jsonl');
    const session = await program.arm({ cgroupV2Path: cgroup.path, eventsPath, log });
    const opens = 20_000;
    // Two files in turn: no open repeats the one before, so none is folded into another's record.
    const loop = await runInCgroup(cgroup.path, [bin['tracer-open-loop']!, String(opens), '/etc/hostname', '/etc/hosts']);
    const { lost } = await session.stop();
    await program.discard();
    const events = await readEvents(eventsPath);
    const recorded = ofKind(events, 'file.open').filter((e) => e.pid === loop.pid && (e.path === '/etc/hostname' || e.path === '/etc/hosts')).length;
    assert.ok(lost > 0, 'the tiny buffer overflowed');
    assert.equal(ofKind(events, 'tracer.lost').reduce((sum, e) => sum + e.count, 0), lost);
    assert.ok(recorded < opens);
    // Each open is one record: every one missing is counted as lost.
    assert.ok(recorded + lost >= opens, `${recorded} recorded + ${lost} lost < ${opens}`);
  });
});
