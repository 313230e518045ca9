import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { MonitorFrames } from '../../src/machinery/host/tracer/monitor-frames.js';
import type { TraceRecord } from '../../src/machinery/host/tracer/trace-records.js';

/** A frame as native/monitor/monitor.c writes it: header, the format's numbers (32-bit), the name, the tail. */
function frame(format: number, tid: number, ns: [number, number], numbers: number[], api = '', nr = 0xffff, tail = Buffer.alloc(0)): Buffer {
  const header = Buffer.alloc(16 + 4 * numbers.length);
  header.writeUInt8(format, 0);
  header.writeUInt8(api.length, 1);
  header.writeUInt16LE(nr, 2);
  header.writeUInt32LE(tid, 4);
  header.writeUInt32LE(ns[0], 8);
  header.writeUInt32LE(ns[1], 12);
  numbers.forEach((n, i) => header.writeUInt32LE(n >>> 0, 16 + 4 * i));
  return Buffer.concat([header, Buffer.from(api, 'latin1'), tail]);
}

const json = (tid: number, ns: [number, number], text: string) => Buffer.concat([frame(0, tid, ns, []), Buffer.from(`${text}\n`)]);
const path = Buffer.from('répertoire', 'utf8');

const identity = json(7, [1700000000, 500000000], '{"op":"identity","pid":7,"ppid":1,"comm":"find"}');
const stream = Buffer.concat([
  identity,
  frame(1, 7, [1700000000, 600000000], [0, -100, 0o2000000, 0, 3, path.length], 'openat', 257, path),
  frame(2, 7, [1700000000, 700000000], [0, 3, 4], 'fcntl', 72),
  frame(4, 7, [1700000000, 800000000], [2, 3, 32768, 80], 'getdents64', 217),
  frame(3, 7, [1700000001, 0], [2, 3, -1]),
  json(7, [1700000001, 5], '{"op":"connect","api":"connect","fd":3,"address":"02000050c0a80001","ret":0}'),
]);

const expected: TraceRecord[] = [
  { ts: 1700000000.5, tid: 7, op: 'identity', pid: 7, ppid: 1, comm: 'find' },
  { ts: 1700000000.6, tid: 7, api: 'openat', op: 'open', dirfd: -100, path: 'répertoire', flags: 0o2000000, mode: 0, ret: 3 },
  { ts: 1700000000.7, tid: 7, api: 'fcntl', op: 'dup', oldfd: 3, newfd: 4 },
  { ts: 1700000000.8, tid: 7, api: 'getdents64', repeated: 2, op: 'call', args: { fd: 3, count: 32768 }, ret: 80 },
  { ts: 1700000001, tid: 7, op: 'closes', fds: [3, -1] },
  { ts: 1700000001 + 5e-9, tid: 7, op: 'connect', api: 'connect', fd: 3, address: { family: 'inet', address: '192.168.0.1', port: 80 }, ret: 0 },
];

function read(pieces: Buffer[]): { records: TraceRecord[]; unreadable: string[]; pending: number } {
  const records: TraceRecord[] = [];
  const unreadable: string[] = [];
  const frames = new MonitorFrames((record) => records.push(record), (what) => unreadable.push(what));
  for (const piece of pieces) frames.push(Buffer.from(piece));
  return { records, unreadable, pending: frames.pending };
}

describe("the monitor's records file (frames)", () => {
  it('reads JSON and binary frames into trace records', () => {
    assert.deepEqual(read([stream]), { records: expected, unreadable: [], pending: 0 });
  });

  it('reads them whole wherever the file was cut between two reads', () => {
    for (let cut = 1; cut < stream.length; cut++) {
      assert.deepEqual(read([stream.subarray(0, cut), stream.subarray(cut)]).records, expected, `cut at ${cut}`);
    }
  });

  it('keeps a frame not yet whole for the next read', () => {
    const { records, pending } = read([stream.subarray(0, stream.length - 3)]);
    assert.equal(records.length, expected.length - 1);
    assert.ok(pending > 0);
  });

  it('says what it cannot read: a record that is no JSON is skipped, an unknown frame ends the reading', () => {
    const broken = Buffer.concat([json(7, [1, 0], '{"op":'), identity, frame(9, 7, [1, 0], [1, 2]), stream]);
    const { records, unreadable } = read([broken]);
    assert.deepEqual(records, expected.slice(0, 1));
    assert.equal(unreadable.length, 2);
    assert.match(unreadable[0]!, /no JSON/);
    assert.match(unreadable[1]!, /unknown format 9/);
  });
});
