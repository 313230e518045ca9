import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { BpftraceOutputParser, exitCodeOf, type BpftraceOutput } from '../../src/machinery/host/tracer/bpftrace-output.js';
import { STRING_LIMIT } from '../../src/machinery/host/tracer/bpftrace-script.js';
import { formatIpv6 } from '../../src/machinery/host/tracer/sockaddr.js';
import { parseCall, StraceParser } from '../../src/machinery/host/tracer/strace-parser.js';
import type { TraceRecord } from '../../src/machinery/host/tracer/trace-records.js';

/**
 * Output orders and shapes the live tests cannot force (records split across CPU buffers, loss
 * messages between a record and its continuation), fed to the real parsers as the tools print them.
 */
function parse(lines: string[]): BpftraceOutput[] {
  const out: BpftraceOutput[] = [];
  const parser = new BpftraceOutputParser('M4rk', (ns) => Number(ns) / 1e9, (o) => out.push(o));
  for (const line of lines) parser.line(line);
  parser.end();
  return out;
}

const records = (out: BpftraceOutput[]) => out.flatMap((o) => (o.kind === 'record' ? [o.record] : []));

describe('bpftrace output parser', () => {
  it('joins a record with string parts that arrive before it (another CPU buffer read first)', () => {
    const out = records(
      parse(['M4rk s 2000000000 7 1 /tmp/new name', 'M4rk R 2000000000 7 1 -100 -100 0 /tmp/old name', 'M4rk F 3000000000 7 0 8']),
    );
    assert.deepEqual(out[0], { ts: 2, tid: 7, op: 'rename', fromDirfd: -100, toDirfd: -100, ret: 0, from: '/tmp/old name', to: '/tmp/new name' });
    assert.deepEqual(out[1], { ts: 3, tid: 7, op: 'fork', child: 8 });
  });

  it('continues a tail over newlines, but not over bpftrace messages or the next record', () => {
    const out = parse(['M4rk O 1000000000 7 0 -100 65 420 3 /tmp/a', 'b', '', 'Lost 12 events', 'M4rk D 1000000001 7 0 3 1']);
    const open = records(out)[0];
    assert.equal(open?.op === 'open' && open.path, '/tmp/a\nb\n');
    assert.deepEqual(
      out.filter((o) => o.kind === 'lost'),
      [{ kind: 'lost', count: 12 }],
    );
  });

  it('appends a continuation only to a string cut at the limit', () => {
    const long = 'x'.repeat(STRING_LIMIT);
    const out = records(
      parse([
        `M4rk O 1 7 1 -100 0 0 3 ${long}`,
        'M4rk s 1 7 100 /rest',
        'M4rk O 2 7 1 -100 0 0 4 /short',
        'M4rk s 2 7 100 garbage past the end',
      ]),
    );
    assert.deepEqual(
      out.map((r) => r.op === 'open' && r.path),
      [`${long}/rest`, '/short'],
    );
  });

  it('reads raw bytes as UTF-8 and the write totals printed after the end marker', () => {
    const bytes = Buffer.from('M4rk U 5 9 0 -100 0 0 /tmp/café', 'utf8').toString('latin1');
    const out = parse([bytes, 'M4rk e 0 0 0', '@wb[9, 4]: 1234', '', 'M4rk r 0 0 0 5 0']);
    const [unlink, total] = records(out);
    assert.equal(unlink?.op === 'unlink' ? unlink.path : undefined, '/tmp/café');
    assert.deepEqual(total?.op === 'write' ? [total.pid, total.fd, total.bytes, total.final] : undefined, [9, 4, 1234, true]);
    assert.deepEqual(out.at(-1), { kind: 'ready', which: 5, value: 0n });
  });

  it('turns wait statuses into exit codes, and signals into negative numbers', () => {
    assert.equal(exitCodeOf(3 << 8), 3);
    assert.equal(exitCodeOf(9), -9);
  });
});

describe('strace output parser', () => {
  it('parses in/out structs, restarts and resumed calls', () => {
    const clone3 = parseCall('clone3({flags=0x3d0f00, exit_signal=0, stack=0x7f3} => {parent_tid=[8806]}, 88) = 8806');
    assert.equal(clone3?.ret, 8806n);
    assert.equal(parseCall('read(3, "\\x41", 1) = ? ERESTARTSYS (To be restarted if SA_RESTART is set)')?.ret, null);
    assert.equal(parseCall('openat(-100, "\\x2f", 0x80000) = -1 ENOENT (No such file or directory)')?.ret, -2n);

    const got: TraceRecord[] = [];
    const parser = new StraceParser((r) => got.push(r));
    parser.line('100  1.000000 connect(3, {sa_family=0xa, sin6_port="\\x00\\x35", sin6_flowinfo="\\x00\\x00\\x00\\x00", sin6_addr="\\x20\\x01\\x0d\\xb8\\x00\\x00\\x00\\x00\\x00\\x00\\x00\\x00\\x00\\x00\\x00\\x01", sin6_scope_id=0}, 28 <unfinished ...>');
    parser.line('101  1.500000 +++ exited with 0 +++');
    parser.line('100  2.000000 <... connect resumed>) = 0');
    const connect = got.find((r) => r.op === 'connect');
    assert.deepEqual(connect && { ts: connect.ts, address: connect.op === 'connect' && connect.address }, {
      ts: 1,
      address: { family: 'inet6', address: '2001:db8::1', port: 53 },
    });
  });

  it('formats IPv6 addresses as RFC 5952 does', () => {
    const v6 = (hex: string) => formatIpv6(Buffer.from(hex, 'hex'));
    assert.equal(v6('00000000000000000000000000000001'), '::1');
    assert.equal(v6('20010db8000000010000000000000001'), '2001:db8:0:1::1');
    assert.equal(v6('00000000000000000000ffff7f000001'), '::ffff:127.0.0.1');
    assert.equal(v6('20010db8000100020003000400050006'), '2001:db8:1:2:3:4:5:6');
  });
});
