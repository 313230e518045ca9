import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { EventDecoder } from '../../src/machinery/host/tracer/event-decoder.js';
import { type TraceOp, type TraceRecord } from '../../src/machinery/host/tracer/trace-records.js';
import type { BehaviorEvent } from '../../src/report/events.js';

/** Trace records as the tracers give them, fed to the real decoder; the events it writes are checked. */
function decode(records: Array<Partial<TraceRecord> & TraceOp>): BehaviorEvent[] {
  const events: BehaviorEvent[] = [];
  const decoder = new EventDecoder((event) => events.push(event), { cwdOf: () => '/tmp' });
  let ts = 1_700_000_000;
  for (const record of records) decoder.record({ ts: (ts += 0.01), tid: 300, ...record } as TraceRecord);
  decoder.finish(ts + 1);
  return events;
}

const START: Array<Partial<TraceRecord> & TraceOp> = [
  { op: 'identity', pid: 300, ppid: 1, comm: 'rs' },
  { op: 'exec', api: 'execve', dirfd: -100, path: '/tmp/rs', argv: ['./rs'], ret: 0 },
  { op: 'socket', api: 'socket', family: 2, type: 1, protocol: 0, ret: 3 },
  { op: 'connect', api: 'connect', fd: 3, address: { family: 'inet', address: '203.0.113.9', port: 4444 }, ret: 0 },
];

describe('event decoder: system call names and the new calls', () => {
  it('names every event after the system call of its record', () => {
    const events = decode([...START, { op: 'open', api: 'creat', dirfd: -100, path: 'out', flags: 0o1101, mode: 0o644, ret: 4 }]);
    assert.deepEqual(events.map((e) => [e.kind, e.api]), [
      ['process.exec', 'execve'],
      ['net.socket', 'socket'],
      ['net.connect', 'connect'],
      ['file.open', 'creat'],
    ]);
    assert.equal((events[3] as { path?: string }).path, '/tmp/out');
  });

  it('keeps the repeats of a folded call, and forgets descriptors closed together', () => {
    const events = decode([
      ...START,
      { op: 'open', api: 'openat', repeated: 4, dirfd: -100, path: '/etc/hostname', flags: 0, mode: 0, ret: 4 },
      { op: 'closes', fds: [4, 3] },
      { op: 'write', fd: 4, bytes: 7, final: true },
      { op: 'dup', api: 'dup2', oldfd: 3, newfd: 5 },
    ]);
    const open = events.find((e) => e.kind === 'file.open')!;
    assert.deepEqual([open.api, open.repeated], ['openat', 4]);
    assert.equal(events.find((e) => e.kind === 'net.connect')!.repeated, undefined, 'a single call has no repeat count');
    // Closed: what is written later through the number is not the file's, and the socket is gone.
    assert.deepEqual(events.filter((e) => e.kind === 'file.write').map((e) => (e as { path: string }).path), ['fd:4']);
    assert.equal((events.find((e) => e.kind === 'file.dup') as { object?: string }).object, 'unknown');
  });

  it('says what a copied descriptor was: the socket and its peer moved onto stdin', () => {
    const events = decode([
      ...START,
      { op: 'dup', api: 'dup2', oldfd: 3, newfd: 0 },
      { op: 'dup', api: 'dup3', oldfd: 0, newfd: 1 },
      { op: 'open', api: 'openat', dirfd: -100, path: '/etc/passwd', flags: 0, mode: 0, ret: 5 },
      { op: 'dup', api: 'fcntl', oldfd: 5, newfd: 10 },
      { op: 'dup', api: 'dup', oldfd: 42, newfd: 11 },
    ]);
    const dups = events.filter((e) => e.kind === 'file.dup');
    assert.deepEqual(
      dups.map(({ ts: _ts, ...rest }) => rest),
      [
        { pid: 300, ppid: 1, tid: 300, comm: 'rs', api: 'dup2', kind: 'file.dup', oldfd: 3, newfd: 0, object: 'socket', family: 'inet', address: '203.0.113.9', port: 4444, ret: 0 },
        { pid: 300, ppid: 1, tid: 300, comm: 'rs', api: 'dup3', kind: 'file.dup', oldfd: 0, newfd: 1, object: 'socket', family: 'inet', address: '203.0.113.9', port: 4444, ret: 1 },
        { pid: 300, ppid: 1, tid: 300, comm: 'rs', api: 'fcntl', kind: 'file.dup', oldfd: 5, newfd: 10, object: 'file', path: '/etc/passwd', ret: 10 },
        { pid: 300, ppid: 1, tid: 300, comm: 'rs', api: 'dup', kind: 'file.dup', oldfd: 42, newfd: 11, object: 'unknown', ret: 11 },
      ],
    );
  });

  it('gives sends and receives their payload and the socket\'s peer', () => {
    const events = decode([
      ...START,
      { op: 'send', api: 'sendto', fd: 3, address: null, ret: 5, payload: '68656c6c6f' },
      { op: 'recv', api: 'recvfrom', fd: 3, address: null, ret: 2, payload: '6f6b' },
      { op: 'recv', api: 'recvmsg', fd: 3, address: null, ret: -11 },
    ]);
    const [send, recv, failed] = events.filter((e) => e.kind === 'net.send' || e.kind === 'net.recv');
    const sent = send as { bytes: number; payload?: string; ret?: number };
    assert.deepEqual(send && { kind: send.kind, api: send.api, ...peer(send), bytes: sent.bytes, payload: sent.payload, ret: sent.ret }, {
      kind: 'net.send', api: 'sendto', family: 'inet', address: '203.0.113.9', port: 4444, bytes: 5, payload: '68656c6c6f', ret: 5,
    });
    assert.deepEqual(recv && { kind: recv.kind, ...peer(recv), payload: (recv as { payload?: string }).payload, ret: (recv as { ret: number }).ret }, {
      kind: 'net.recv', family: 'inet', address: '203.0.113.9', port: 4444, payload: '6f6b', ret: 2,
    });
    assert.deepEqual(failed && [failed.kind, (failed as { bytes: number }).bytes, (failed as { ret: number }).ret, 'payload' in failed], ['net.recv', 0, -11, false]);
  });

  it('records sleeps, other decoded calls and the tracer\'s counts of the process', () => {
    const events = decode([
      ...START,
      { op: 'sleep', api: 'clock_nanosleep', seconds: 600, ret: 0 },
      { op: 'call', api: 'setsid', args: {}, ret: 300 },
      { op: 'call', api: 'prctl', args: { option: 4, arg2: 0 }, ret: 0 },
      { op: 'identity', tid: 301, pid: 301, ppid: 300, comm: 'other' },
      { op: 'counts', tid: 301, pid: 300, counts: { openat: 7, getdents64: 2 } },
    ]);
    const rest = events.slice(3).map(({ ts: _ts, ...event }) => event);
    assert.deepEqual(rest, [
      { pid: 300, ppid: 1, tid: 300, comm: 'rs', api: 'clock_nanosleep', kind: 'process.sleep', seconds: 600, ret: 0 },
      { pid: 300, ppid: 1, tid: 300, comm: 'rs', api: 'setsid', kind: 'system.call', args: {}, ret: 300 },
      { pid: 300, ppid: 1, tid: 300, comm: 'rs', api: 'prctl', kind: 'system.call', args: { option: 4, arg2: 0 }, ret: 0 },
      { pid: 300, ppid: 1, tid: 300, comm: 'rs', kind: 'process.counts', counts: { openat: 7, getdents64: 2 } },
    ]);
  });

  it('names a total of writes after write, whatever call ended it', () => {
    const events = decode([
      ...START,
      { op: 'open', api: 'openat', dirfd: -100, path: '/tmp/log', flags: 0o101, mode: 0o644, ret: 4 },
      { op: 'write', api: 'write', fd: 4, bytes: 10 },
      { op: 'write', api: 'writev', fd: 4, bytes: 5 },
      { op: 'write', api: 'write', fd: 3, bytes: 7 },
      { op: 'close', api: 'close', fd: 4 },
      { op: 'exit', api: 'exit_group', code: 0 },
    ]);
    const tail = events.slice(4).map((e) => [e.kind, e.api, (e as { bytes?: number }).bytes]);
    assert.deepEqual(tail, [
      ['file.write', 'write', 15],
      ['net.send', 'write', 7],
      ['process.exit', 'exit_group', undefined],
    ]);
  });
});

function peer(event: BehaviorEvent): { family?: string; address?: string; port?: number } {
  const { family, address, port } = event as { family?: string; address?: string; port?: number };
  return { family, address, port };
}
