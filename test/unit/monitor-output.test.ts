import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { parseMonitorLine } from '../../src/machinery/host/tracer/monitor-output.js';

const hex = (bytes: number[] | Buffer) => Buffer.from(bytes).toString('hex');

/** A sockaddr as the kernel lays it out: family in host order (little-endian here), then the rest. */
function sockaddrUnix(path: string, abstract = false): string {
  const name = Buffer.from(path);
  return hex(Buffer.concat([Buffer.from([1, 0]), abstract ? Buffer.from([0]) : Buffer.alloc(0), name, Buffer.from([0])]));
}

describe("the monitor's output lines", () => {
  it('passes control lines through', () => {
    assert.deepEqual(parseMonitorLine('{"ctl":"disarmed","lost":3,"confirmed":true}'), { ctl: 'disarmed', lost: 3, confirmed: true });
  });

  it('decodes socket addresses from the sockaddr bytes: inet, unix paths, abstract names, none', () => {
    const inet = hex([2, 0, 0x1f, 0x90, 127, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0]);
    assert.deepEqual(parseMonitorLine(`{"ts":1,"tid":5,"api":"connect","op":"connect","fd":3,"address":"${inet}","ret":0}`), {
      ts: 1, tid: 5, api: 'connect', op: 'connect', fd: 3, address: { family: 'inet', address: '127.0.0.1', port: 8080 }, ret: 0,
    });
    const unix = parseMonitorLine(`{"ts":1,"tid":5,"op":"bind","fd":3,"address":"${sockaddrUnix('/tmp/s p.sock')}","ret":0}`);
    assert.deepEqual(unix && 'op' in unix && unix.op === 'bind' && unix.address, { family: 'unix', address: '/tmp/s p.sock', port: 0 });
    const abstract = parseMonitorLine(`{"ts":1,"tid":5,"op":"connect","fd":3,"address":"${sockaddrUnix('hidden', true)}","ret":0}`);
    assert.deepEqual(abstract && 'op' in abstract && abstract.op === 'connect' && abstract.address, { family: 'unix', address: '@hidden', port: 0 });
    const none = parseMonitorLine('{"ts":1,"tid":5,"op":"send","fd":1,"address":null,"ret":4,"payload":"68690a00"}');
    assert.deepEqual(none, { ts: 1, tid: 5, op: 'send', fd: 1, address: null, ret: 4, payload: '68690a00' });
  });

  it('makes mapping addresses bigints', () => {
    const map = parseMonitorLine('{"ts":1,"tid":5,"api":"mmap","op":"exec_map","call":"mmap","address":"7f594f9ea000","length":4096,"prot":5,"fd":3}');
    assert.equal(map && 'op' in map && map.op === 'exec_map' && map.address, 0x7f594f9ea000n);
  });

  it('refuses what is no JSON', () => {
    assert.equal(parseMonitorLine('{"ts":1,"tid'), null);
  });
});
