import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { BehaviorEvent } from '../../src/report/events.js';
import { sampleDecoder } from '../../src/machinery/host/tracer/sample-scope.js';
import type { TraceRecord } from '../../src/machinery/host/tracer/trace-records.js';

/**
 * The records -> events step keeps only the sample: records in the order a tracer that sees the whole
 * cgroup (eBPF) or one that starts the sample itself (strace) gives them, decoded into events.
 */
const SAMPLE = { initPath: '/sbin/init', cwd: '/tmp' };

function decode(records: TraceRecord[], belowInit: boolean, launcherPath?: string): BehaviorEvent[] {
  const events: BehaviorEvent[] = [];
  const decoder = sampleDecoder((event) => events.push(event), SAMPLE, { belowInit, cwdOf: () => '/host/cwd/of/nestbox', ...(launcherPath ? { launcherPath } : {}) });
  for (const record of records) decoder.record(record);
  decoder.finish(99);
  return events;
}

let clock = 0;
const at = (tid: number) => ({ ts: ++clock, tid });
const identity = (tid: number, pid: number, ppid: number, comm: string): TraceRecord => ({ ...at(tid), op: 'identity', pid, ppid, comm });
const exec = (tid: number, path: string, argv: string[], ret = 0): TraceRecord => ({ ...at(tid), op: 'exec', dirfd: -100, path, argv, ret });
const open = (tid: number, path: string, ret = 3): TraceRecord => ({ ...at(tid), op: 'open', dirfd: -100, path, flags: 0o101, mode: 0o644, ret });
const fork = (tid: number, child: number): TraceRecord => ({ ...at(tid), op: 'fork', child });
const exit = (tid: number, code = 0): TraceRecord => ({ ...at(tid), op: 'exit', code });

/** What the eBPF program sees on a warm start: the launcher joins the cgroup, bubblewrap sets up, the init starts the sample. */
function launch(): TraceRecord[] {
  return [
    identity(100, 100, 50, 'sh'),
    open(100, '/sys/fs/cgroup/unified/nestbox-machine-x/sample/cgroup.procs'),
    exec(100, '/usr/bin/nsenter', ['nsenter', '--net=/run/netns/nestbox-net-x']),
    exec(100, '/usr/bin/bwrap', ['bwrap', '--bind', '/run/nestbox/machines/x/root', '/']),
    fork(100, 101),
    identity(101, 101, 100, 'bwrap'),
    { ...at(101), op: 'mkdir', dirfd: -100, path: '/tmp/newroot', mode: 0o755, ret: 0 },
    identity(101, 101, 100, 'init'),
    exec(101, '/sbin/init', ['/sbin/init', 'sample.sh']),
    fork(101, 102),
    // The init's child looks the command up in PATH before it finds it.
    exec(102, '/usr/local/bin/sample.sh', ['sample.sh'], -2),
    identity(102, 102, 101, 'sample.sh'),
    exec(102, '/tmp/sample.sh', ['/bin/sh', '/tmp/sample.sh']),
  ];
}

describe('only the sample in the trace', () => {
  it('starts at the init child’s exec: no launcher, no bubblewrap, no init, no host path', () => {
    const events = decode(
      [
        ...launch(),
        open(102, 'out.txt'),
        fork(102, 103),
        identity(103, 103, 102, 'sh'),
        exec(103, '/bin/sleep', ['sleep', '1']),
        // The child's parent exits; the init reaps it: still the sample's.
        exit(102),
        open(103, '/tmp/later'),
        exit(103),
        exit(101),
      ],
      false,
    );
    const pids = new Set(events.map((event) => event.pid));
    assert.deepEqual([...pids], [102, 103]);
    const text = JSON.stringify(events);
    for (const word of ['bwrap', 'nsenter', '/sbin/init', '/run/nestbox', '/sys/fs/cgroup', 'newroot', '/host/cwd']) assert.ok(!text.includes(word), word);
    const first = events[0]!;
    assert.equal(first.kind, 'process.exec');
    assert.deepEqual([first.pid, first.ppid, first.comm], [102, 0, 'sample.sh'], 'the first process has no nestbox parent');
    const relative = events.find((event) => event.kind === 'file.open' && event.pid === 102);
    assert.equal(relative?.kind === 'file.open' && relative.path, '/tmp/out.txt', 'relative paths start from the sample’s directory');
    const child = events.find((event) => event.kind === 'process.exec' && event.pid === 103);
    assert.equal(child?.ppid, 102);
    assert.equal(events.filter((event) => event.kind === 'process.exit').length, 2, 'the init’s exit is not the sample’s');
  });

  it('records nothing when the init never starts a program', () => {
    const records = launch().slice(0, 10);
    assert.deepEqual(decode([...records, exit(101, 127)], false), []);
  });

  it('takes the first exec when the tracer starts the sample itself (strace)', () => {
    const events = decode(
      [
        identity(7, 7, 0, ''),
        identity(7, 7, 0, 'sample'),
        exec(7, '/tmp/sample', ['/tmp/sample']),
        { ...at(7), op: 'write', fd: 1, bytes: 3 },
        fork(7, 8),
        exec(8, '/bin/true', ['true']),
        exit(8),
        exit(7),
      ],
      true,
    );
    assert.deepEqual([events[0]?.kind, events[0]?.pid, events[0]?.ppid, events[0]?.comm], ['process.exec', 7, 0, 'sample']);
    assert.deepEqual(
      events.map((event) => [event.pid, event.kind]),
      [
        [7, 'process.exec'],
        [7, 'process.fork'],
        [8, 'process.exec'],
        [8, 'process.exit'],
        [7, 'file.write'],
        [7, 'process.exit'],
      ],
    );
  });

  it('starts at the exec that follows nestbox\'s launcher, in the same process (the qemu guest\'s supervisor hand-off)', () => {
    const launcher = '/usr/lib/nestbox/init';
    const run = (records: TraceRecord[]) => decode(records, true, launcher);
    const handedOff = run([
      identity(9, 9, 1, 'python3'),
      exec(9, launcher, [launcher, '--exec', '/tmp/sample']),
      identity(9, 9, 1, 'init'),
      open(9, '/proc/self/fd'),
      exec(9, '/tmp/sample', ['/tmp/sample']),
      identity(9, 9, 1, 'sample'),
      fork(9, 10),
      exec(10, '/bin/true', ['true']),
      exit(10),
      exit(9),
    ]);
    assert.ok(!JSON.stringify(handedOff).includes(launcher), 'the launcher is nestbox\'s');
    assert.ok(!handedOff.some((event) => event.kind === 'file.open'), 'what the launcher did is left out');
    assert.deepEqual([handedOff[0]?.kind, handedOff[0]?.pid, handedOff[0]?.ppid], ['process.exec', 9, 0]);
    assert.deepEqual(handedOff.filter((event) => event.kind === 'process.exec').map((event) => event.pid), [9, 10]);
    // Without the launcher (a guest image without it), the first exec is the sample's, as before.
    const direct = run([identity(9, 9, 1, 'sample'), exec(9, '/tmp/sample', ['/tmp/sample']), exit(9)]);
    assert.deepEqual(direct.map((event) => [event.pid, event.kind]), [[9, 'process.exec'], [9, 'process.exit']]);
  });

  it('keeps writes totalled for the sample process by another thread, and lost records', () => {
    const events = decode(
      [
        ...launch(),
        identity(110, 102, 101, 'worker'),
        { ...at(110), op: 'write', fd: 5, bytes: 9, pid: 102, final: true },
        { ...at(101), op: 'write', fd: 4, bytes: 1, pid: 101, final: true },
        { ts: ++clock, tid: 0, op: 'lost', count: 2 },
      ],
      false,
    );
    assert.deepEqual(
      events.slice(1).map((event) => [event.pid, event.kind]),
      [
        [102, 'file.write'],
        [0, 'tracer.lost'],
      ],
    );
  });
});
