import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { EventDecoder } from '../../src/machinery/host/tracer/event-decoder.js';
import type { TraceOp, TraceRecord } from '../../src/machinery/host/tracer/trace-records.js';

/**
 * The events file's lines are JSON.stringify of the decoder's events, so the order in which the decoder
 * gives an event its fields is part of the file: header (ts, pid, ppid, tid, comm, then api and repeated
 * where present), then the body's fields. Every kind, with strings JSON must escape (quotes, backslashes,
 * control characters, lone surrogates) and ones it must not (non-ASCII, a surrogate pair), against the
 * lines the decoder wrote before its events were built in one literal.
 */
const RECORDS: Array<Partial<TraceRecord> & TraceOp> = [
  { op: 'identity', pid: 300, ppid: 1, comm: 'sa"mple\\' },
  { op: 'exec', api: 'execve', dirfd: -100, path: '/tmp/s\u0001', argv: ['./s', 'caf\u00e9', '\ud800'], ret: 0 },
  { op: 'fork', api: 'clone', child: 301 },
  { op: 'rename_task', api: 'prctl', name: 'kw\u001f' },
  { op: 'open', api: 'openat', repeated: 3, dirfd: -100, path: 'a "b"\n', flags: 0, mode: 0, ret: 4 },
  { op: 'dup', api: 'fcntl', oldfd: 4, newfd: 5 },
  { op: 'dup', oldfd: 9, newfd: 6 },
  { op: 'write', api: 'write', fd: 5, bytes: 3 },
  { op: 'closes', fds: [5, 4] },
  { op: 'socket', api: 'socket', family: 2, type: 1, protocol: 0, ret: 3 },
  { op: 'connect', api: 'connect', fd: 3, address: { family: 'inet', address: '203.0.113.9', port: 4444 }, ret: 0 },
  { op: 'dup', api: 'dup2', oldfd: 3, newfd: 0 },
  { op: 'send', api: 'sendto', fd: 3, address: null, ret: 5, payload: '68656c6c6f' },
  { op: 'recv', api: 'recvfrom', fd: 3, address: null, ret: -11 },
  { op: 'bind', api: 'bind', fd: 3, address: null, ret: -22 },
  { op: 'listen', api: 'listen', fd: 3, ret: 0 },
  { op: 'accept', api: 'accept4', fd: 3, ret: 7 },
  { op: 'pipe', api: 'pipe2', fds: [8, 9], socket: false },
  { op: 'chdir', api: 'chdir', dirfd: -100, path: '/var/\ud83d\ude00', ret: 0 },
  { op: 'rename', api: 'renameat2', fromDirfd: -100, from: 'x', toDirfd: -100, to: '/y', ret: 0 },
  { op: 'unlink', api: 'unlinkat', dirfd: -100, path: 'x', directory: false, ret: 0 },
  { op: 'unlink', api: 'rmdir', dirfd: -100, path: 'd', directory: true, ret: -2 },
  { op: 'mkdir', api: 'mkdir', dirfd: -100, path: 'd', mode: 493, ret: 0 },
  { op: 'chmod', api: 'fchmodat', dirfd: -100, path: 'd', mode: 448, ret: 0 },
  { op: 'chown', api: 'fchownat', dirfd: -100, path: 'd', uid: 0, gid: 0, ret: -1 },
  { op: 'link', api: 'symlinkat', target: '../t', targetDirfd: -100, dirfd: -100, path: 'l', symbolic: true, ret: 0 },
  { op: 'memfd', api: 'memfd_create', name: 'm', ret: 10 },
  { op: 'exec_map', api: 'mmap', call: 'mmap', address: 0x7f00n, length: 4096, prot: 5, fd: 10 },
  { op: 'ptrace', api: 'ptrace', request: 0, target: 0, ret: 0 },
  { op: 'module', api: 'init_module', call: 'init_module', fd: -1, name: '', ret: -1 },
  { op: 'setid', api: 'setuid', call: 'setuid', ids: [0], ret: 0 },
  { op: 'kill', api: 'kill', target: 1, signal: 9, ret: -1 },
  { op: 'sleep', api: 'nanosleep', seconds: 1.5, ret: 0 },
  { op: 'call', api: 'getdents64', args: { fd: 4, count: 32768 }, ret: 0 },
  { op: 'counts', pid: 300, counts: { openat: 2 } },
  { op: 'lost', count: 2 },
  { op: 'exit', api: 'exit_group', code: 0 },
];

const LINES = [
  "{\"ts\":1700000000.2519999,\"pid\":300,\"ppid\":1,\"tid\":300,\"comm\":\"sa\\\"mple\\\\\",\"api\":\"execve\",\"kind\":\"process.exec\",\"path\":\"/tmp/s\\u0001\",\"argv\":[\"./s\",\"caf\u00e9\",\"\\ud800\"],\"ret\":0}",
  "{\"ts\":1700000000.2529998,\"pid\":300,\"ppid\":1,\"tid\":300,\"comm\":\"sa\\\"mple\\\\\",\"api\":\"clone\",\"kind\":\"process.fork\",\"child\":301}",
  "{\"ts\":1700000000.2539997,\"pid\":300,\"ppid\":1,\"tid\":300,\"comm\":\"sa\\\"mple\\\\\",\"api\":\"prctl\",\"kind\":\"process.rename\",\"name\":\"kw\\u001f\"}",
  "{\"ts\":1700000000.2549996,\"pid\":300,\"ppid\":1,\"tid\":300,\"comm\":\"kw\\u001f\",\"api\":\"openat\",\"repeated\":3,\"kind\":\"file.open\",\"path\":\"/tmp/a \\\"b\\\"\\n\",\"flags\":0,\"mode\":0,\"ret\":4}",
  "{\"ts\":1700000000.2559996,\"pid\":300,\"ppid\":1,\"tid\":300,\"comm\":\"kw\\u001f\",\"api\":\"fcntl\",\"kind\":\"file.dup\",\"oldfd\":4,\"newfd\":5,\"object\":\"file\",\"path\":\"/tmp/a \\\"b\\\"\\n\",\"ret\":5}",
  "{\"ts\":1700000000.2569995,\"pid\":300,\"ppid\":1,\"tid\":300,\"comm\":\"kw\\u001f\",\"kind\":\"file.dup\",\"oldfd\":9,\"newfd\":6,\"object\":\"unknown\",\"ret\":6}",
  "{\"ts\":1700000000.2589993,\"pid\":300,\"ppid\":1,\"tid\":300,\"comm\":\"kw\\u001f\",\"api\":\"write\",\"kind\":\"file.write\",\"path\":\"/tmp/a \\\"b\\\"\\n\",\"bytes\":3}",
  "{\"ts\":1700000000.2599993,\"pid\":300,\"ppid\":1,\"tid\":300,\"comm\":\"kw\\u001f\",\"api\":\"socket\",\"kind\":\"net.socket\",\"family\":\"inet\",\"type\":1,\"protocol\":0,\"ret\":3}",
  "{\"ts\":1700000000.2609992,\"pid\":300,\"ppid\":1,\"tid\":300,\"comm\":\"kw\\u001f\",\"api\":\"connect\",\"kind\":\"net.connect\",\"fd\":3,\"family\":\"inet\",\"address\":\"203.0.113.9\",\"port\":4444,\"ret\":0}",
  "{\"ts\":1700000000.2619991,\"pid\":300,\"ppid\":1,\"tid\":300,\"comm\":\"kw\\u001f\",\"api\":\"dup2\",\"kind\":\"file.dup\",\"oldfd\":3,\"newfd\":0,\"object\":\"socket\",\"family\":\"inet\",\"address\":\"203.0.113.9\",\"port\":4444,\"ret\":0}",
  "{\"ts\":1700000000.262999,\"pid\":300,\"ppid\":1,\"tid\":300,\"comm\":\"kw\\u001f\",\"api\":\"sendto\",\"kind\":\"net.send\",\"fd\":3,\"family\":\"inet\",\"address\":\"203.0.113.9\",\"port\":4444,\"bytes\":5,\"payload\":\"68656c6c6f\",\"ret\":5}",
  "{\"ts\":1700000000.263999,\"pid\":300,\"ppid\":1,\"tid\":300,\"comm\":\"kw\\u001f\",\"api\":\"recvfrom\",\"kind\":\"net.recv\",\"fd\":3,\"family\":\"inet\",\"address\":\"203.0.113.9\",\"port\":4444,\"bytes\":0,\"ret\":-11}",
  "{\"ts\":1700000000.264999,\"pid\":300,\"ppid\":1,\"tid\":300,\"comm\":\"kw\\u001f\",\"api\":\"bind\",\"kind\":\"net.bind\",\"fd\":3,\"family\":\"inet\",\"address\":\"\",\"port\":0,\"ret\":-22}",
  "{\"ts\":1700000000.2659988,\"pid\":300,\"ppid\":1,\"tid\":300,\"comm\":\"kw\\u001f\",\"api\":\"listen\",\"kind\":\"net.listen\",\"fd\":3,\"ret\":0}",
  "{\"ts\":1700000000.2669988,\"pid\":300,\"ppid\":1,\"tid\":300,\"comm\":\"kw\\u001f\",\"api\":\"accept4\",\"kind\":\"net.accept\",\"fd\":3,\"ret\":7}",
  "{\"ts\":1700000000.2699986,\"pid\":300,\"ppid\":1,\"tid\":300,\"comm\":\"kw\\u001f\",\"api\":\"renameat2\",\"kind\":\"file.rename\",\"from\":\"/var/\ud83d\ude00/x\",\"to\":\"/y\",\"ret\":0}",
  "{\"ts\":1700000000.2709985,\"pid\":300,\"ppid\":1,\"tid\":300,\"comm\":\"kw\\u001f\",\"api\":\"unlinkat\",\"kind\":\"file.delete\",\"path\":\"/var/\ud83d\ude00/x\",\"ret\":0}",
  "{\"ts\":1700000000.2719984,\"pid\":300,\"ppid\":1,\"tid\":300,\"comm\":\"kw\\u001f\",\"api\":\"rmdir\",\"kind\":\"file.rmdir\",\"path\":\"/var/\ud83d\ude00/d\",\"ret\":-2}",
  "{\"ts\":1700000000.2729983,\"pid\":300,\"ppid\":1,\"tid\":300,\"comm\":\"kw\\u001f\",\"api\":\"mkdir\",\"kind\":\"file.mkdir\",\"path\":\"/var/\ud83d\ude00/d\",\"mode\":493,\"ret\":0}",
  "{\"ts\":1700000000.2739983,\"pid\":300,\"ppid\":1,\"tid\":300,\"comm\":\"kw\\u001f\",\"api\":\"fchmodat\",\"kind\":\"file.chmod\",\"path\":\"/var/\ud83d\ude00/d\",\"mode\":448,\"ret\":0}",
  "{\"ts\":1700000000.2749982,\"pid\":300,\"ppid\":1,\"tid\":300,\"comm\":\"kw\\u001f\",\"api\":\"fchownat\",\"kind\":\"file.chown\",\"path\":\"/var/\ud83d\ude00/d\",\"uid\":0,\"gid\":0,\"ret\":-1}",
  "{\"ts\":1700000000.275998,\"pid\":300,\"ppid\":1,\"tid\":300,\"comm\":\"kw\\u001f\",\"api\":\"symlinkat\",\"kind\":\"file.link\",\"from\":\"../t\",\"to\":\"/var/\ud83d\ude00/l\",\"symbolic\":true,\"ret\":0}",
  "{\"ts\":1700000000.276998,\"pid\":300,\"ppid\":1,\"tid\":300,\"comm\":\"kw\\u001f\",\"api\":\"memfd_create\",\"kind\":\"memory.memfd\",\"name\":\"m\",\"ret\":10}",
  "{\"ts\":1700000000.277998,\"pid\":300,\"ppid\":1,\"tid\":300,\"comm\":\"kw\\u001f\",\"api\":\"mmap\",\"kind\":\"memory.exec_map\",\"call\":\"mmap\",\"address\":\"0x7f00\",\"length\":4096,\"prot\":5,\"path\":\"memfd:m\"}",
  "{\"ts\":1700000000.278998,\"pid\":300,\"ppid\":1,\"tid\":300,\"comm\":\"kw\\u001f\",\"api\":\"ptrace\",\"kind\":\"process.ptrace\",\"request\":0,\"target\":0,\"ret\":0}",
  "{\"ts\":1700000000.2799978,\"pid\":300,\"ppid\":1,\"tid\":300,\"comm\":\"kw\\u001f\",\"api\":\"init_module\",\"kind\":\"module.load\",\"call\":\"init_module\",\"ret\":-1}",
  "{\"ts\":1700000000.2809978,\"pid\":300,\"ppid\":1,\"tid\":300,\"comm\":\"kw\\u001f\",\"api\":\"setuid\",\"kind\":\"process.setid\",\"call\":\"setuid\",\"ids\":[0],\"ret\":0}",
  "{\"ts\":1700000000.2819977,\"pid\":300,\"ppid\":1,\"tid\":300,\"comm\":\"kw\\u001f\",\"api\":\"kill\",\"kind\":\"process.kill\",\"target\":1,\"signal\":9,\"ret\":-1}",
  "{\"ts\":1700000000.2829976,\"pid\":300,\"ppid\":1,\"tid\":300,\"comm\":\"kw\\u001f\",\"api\":\"nanosleep\",\"kind\":\"process.sleep\",\"seconds\":1.5,\"ret\":0}",
  "{\"ts\":1700000000.2839975,\"pid\":300,\"ppid\":1,\"tid\":300,\"comm\":\"kw\\u001f\",\"api\":\"getdents64\",\"kind\":\"system.call\",\"args\":{\"fd\":4,\"count\":32768},\"ret\":0}",
  "{\"ts\":1700000000.2849975,\"pid\":300,\"ppid\":1,\"tid\":300,\"comm\":\"kw\\u001f\",\"kind\":\"process.counts\",\"counts\":{\"openat\":2}}",
  "{\"ts\":1700000000.2859974,\"pid\":300,\"ppid\":1,\"tid\":300,\"comm\":\"kw\\u001f\",\"kind\":\"tracer.lost\",\"count\":2}",
  "{\"ts\":1700000000.2869973,\"pid\":300,\"ppid\":1,\"tid\":300,\"comm\":\"kw\\u001f\",\"api\":\"exit_group\",\"kind\":\"process.exit\",\"code\":0}",
];

describe('event decoder: the events file\'s lines', () => {
  it('writes every kind of event with its fields in the same order and escapes as before', () => {
    const lines: string[] = [];
    const decoder = new EventDecoder((event) => lines.push(JSON.stringify(event)), { cwdOf: () => '/tmp' });
    let ts = 1_700_000_000.25;
    for (const record of RECORDS) decoder.record({ ts: (ts += 0.001), tid: 300, ...record } as TraceRecord);
    decoder.finish(ts + 1);
    assert.deepEqual(lines, LINES);
  });
});
