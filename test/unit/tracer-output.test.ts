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

  it('names each record by its call and decodes payloads, sleeps, descriptor copies and other calls (strace 6.1 lines)', () => {
    const got: TraceRecord[] = [];
    const parser = new StraceParser((r) => got.push(r));
    for (const line of [
      '500  1.000001 sendto(3, "\\x68\\x69\\x0a\\x01", 4, 0, NULL, 0) = 4',
      '500  1.000002 recvfrom(4, "\\x68\\x69\\x0a\\x01", 16, 0, NULL, NULL) = 4',
      '500  1.000003 sendmsg(3, {msg_name=NULL, msg_namelen=0, msg_iov=[{iov_base="\\x6d\\x73\\x67\\x21", iov_len=4}], msg_iovlen=1, msg_controllen=0, msg_flags=0}, 0) = 4',
      '500  1.000004 recvmsg(4, {msg_name=NULL, msg_namelen=0, msg_iov=[{iov_base="\\x6d\\x73\\x67\\x21", iov_len=16}], msg_iovlen=1, msg_controllen=0, msg_flags=0}, 0) = 2',
      '500  1.000005 clock_nanosleep(0, 0, {tv_sec=2, tv_nsec=500000000}, NULL) = 0',
      '500  1.000000 clock_nanosleep(0, 0x1, {tv_sec=61, tv_nsec=0}, NULL) = 0',
      '500  1.000007 timerfd_settime(5, 0, {it_interval={tv_sec=0, tv_nsec=0}, it_value={tv_sec=100, tv_nsec=0}}, NULL) = 0',
      '500  1.000008 alarm(30)        = 0',
      '500  1.000009 dup2(3, 0)      = 0',
      '500  1.000010 fcntl(3, 0, 10) = 11',
      '500  1.000011 fcntl(3, 0x3)   = 0x2 (flags O_RDWR)',
      '500  1.000012 setpgid(0, 0)   = 0',
      '500  1.000013 setsid()        = -1 EPERM (Operation not permitted)',
      '500  1.000014 truncate("\\x2f\\x74\\x6d\\x70\\x2f\\x78", 0) = -1 ENOENT (No such file or directory)',
      '500  1.000015 clock_nanosleep(0, 0, {tv_sec=100, tv_nsec=0},  <unfinished ...>) = ?',
    ]) {
      parser.line(line);
    }
    parser.finish(9);
    const summary = got.filter((r) => r.op !== 'identity').map((r) => {
      const { ts: _ts, tid: _tid, ...rest } = r;
      return rest;
    });
    assert.deepEqual(summary, [
      { api: 'sendto', op: 'send', fd: 3, address: null, ret: 4, payload: '68690a01' },
      { api: 'recvfrom', op: 'recv', fd: 4, address: null, ret: 4, payload: '68690a01' },
      { api: 'sendmsg', op: 'send', fd: 3, address: null, ret: 4, payload: '6d736721' },
      { api: 'recvmsg', op: 'recv', fd: 4, address: null, ret: 2, payload: '6d73' },
      { api: 'clock_nanosleep', op: 'sleep', seconds: 2.5, ret: 0 },
      { api: 'clock_nanosleep', op: 'sleep', seconds: 60, ret: 0 },
      { api: 'timerfd_settime', op: 'sleep', seconds: 100, ret: 0 },
      { api: 'alarm', op: 'sleep', seconds: 30, ret: 0 },
      { api: 'dup2', op: 'dup', oldfd: 3, newfd: 0 },
      { api: 'fcntl', op: 'dup', oldfd: 3, newfd: 11 },
      { api: 'fcntl', op: 'call', args: { fd: 3, cmd: 3, arg: 0 }, ret: 2 },
      { api: 'setpgid', op: 'call', args: { pid: 0, pgid: 0 }, ret: 0 },
      { api: 'setsid', op: 'call', args: {}, ret: -1 },
      { api: 'truncate', op: 'call', args: { path: '/tmp/x', length: 0 }, ret: -2 },
      // The sleep the process was killed in never returned: it is recorded as it began.
      { api: 'clock_nanosleep', op: 'sleep', seconds: 100, ret: 0 },
      { op: 'counts', pid: 500, counts: { sendto: 1, recvfrom: 1, sendmsg: 1, recvmsg: 1, clock_nanosleep: 3, timerfd_settime: 1, alarm: 1, dup2: 1, fcntl: 2, setpgid: 1, setsid: 1, truncate: 1 } },
    ]);
  });

  it('counts the calls of each process, threads with their process, given when the process exits', () => {
    const got: TraceRecord[] = [];
    const parser = new StraceParser((r) => got.push(r));
    for (const line of [
      '600  1.0 clone3({flags=0x3d0f00, exit_signal=0, stack=0x7f3} => {parent_tid=[601]}, 88) = 601',
      '601  1.1 openat(-100, "\\x2f\\x61", 0) = 3',
      '600  1.2 openat(-100, "\\x2f\\x62", 0) = 4',
      '600  1.3 clone(child_stack=NULL, flags=0x1200011, child_tidptr=0x7f) = 602',
      '602  1.4 openat(-100, "\\x2f\\x63", 0) = 3',
      '602  1.5 +++ exited with 0 +++',
    ]) {
      parser.line(line);
    }
    const countsAtExit = got.filter((r) => r.op === 'counts');
    assert.deepEqual(countsAtExit.map((r) => r.op === 'counts' && [r.pid, r.counts]), [[602, { openat: 1 }]]);
    parser.finish(2);
    const all = got.filter((r) => r.op === 'counts').map((r) => r.op === 'counts' && [r.pid, r.counts]);
    assert.deepEqual(all, [
      [602, { openat: 1 }],
      [600, { clone3: 1, openat: 2, clone: 1 }],
    ]);
  });

  it('holds back the first lines of a task until the clone that made it returns in its parent', () => {
    const got: TraceRecord[] = [];
    const parser = new StraceParser((r) => got.push(r));
    for (const line of [
      '700  1.0 clone3({flags=0x3d0f00, exit_signal=0, stack=0x7f3} <unfinished ...>',
      '701  1.1 openat(-100, "\\x2f\\x74", 0x241, 0666) = 3',
      '701  1.2 write(3, "thread", 6) = 6',
      '700  1.3 <... clone3 resumed> => {parent_tid=[701]}, 88) = 701',
      '701  1.4 close(3) = 0',
    ]) {
      parser.line(line);
    }
    // The thread is introduced as one of process 700 before anything it did.
    assert.deepEqual(got[0] && got[0].op === 'identity' && [got[0].tid, got[0].pid], [700, 700]);
    const thread = got.find((r) => r.op === 'identity' && r.tid === 701);
    assert.ok(thread && thread.op === 'identity' && thread.pid === 700);
    const open = got.findIndex((r) => r.op === 'open' && r.tid === 701);
    assert.ok(got.indexOf(thread) < open, 'known as a thread before its open');
    parser.finish(2);
    assert.deepEqual(got.filter((r) => r.op === 'counts').map((r) => r.op === 'counts' && [r.pid, r.counts]), [[700, { clone3: 1, openat: 1, write: 1, close: 1 }]]);
  });

  it('formats IPv6 addresses as RFC 5952 does', () => {
    const v6 = (hex: string) => formatIpv6(Buffer.from(hex, 'hex'));
    assert.equal(v6('00000000000000000000000000000001'), '::1');
    assert.equal(v6('20010db8000000010000000000000001'), '2001:db8:0:1::1');
    assert.equal(v6('00000000000000000000ffff7f000001'), '::ffff:127.0.0.1');
    assert.equal(v6('20010db8000100020003000400050006'), '2001:db8:1:2:3:4:5:6');
  });
});
