import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { pino } from 'pino';
import { MonitorLoader } from '../../src/machinery/host/tracer/index.js';
import type { TraceRecord } from '../../src/machinery/host/tracer/trace-records.js';
import { compileFixtures, createTestCgroup, readRecordsFile, runInCgroup, type RunResult, type TestCgroup } from '../fixtures/tracer-harness.js';

const OPENATS = 200_000;
const LOGIN = '{"id":1,"method":"login","params":{"login":"nestbox-wallet","pass":"x"}}\n';
const ANSWER = '{"id":1,"result":{"status":"OK"}}\n';
const LOGIN32 = '{"login":"nestbox-i386"}\n';

type Of<K extends TraceRecord['op']> = TraceRecord & { op: K };

/**
 * nestbox's monitor (native/monitor) itself: its records as the loader writes them, for real programs
 * in a real cgroup: exact per-process counts, payloads, descriptor moves, daemonizing and sleeps.
 */
describe('the monitor: records of a cgroup, straight from the loader', { timeout: 300_000 }, () => {
  const log = pino({ level: 'silent' });
  let work: string;
  let cgroup: TestCgroup;
  let monitor: MonitorLoader;
  let server: Server;
  /** The i386 program's server: it answers its login line as `server` does. */
  let server32: Server;
  let received32 = '';
  let received = '';
  const records: TraceRecord[] = [];
  let lost: number;
  let counter: RunResult;
  let calls: RunResult;
  let calls32: RunResult;
  let outsider: RunResult;
  let longArgv: RunResult;
  let longLink: RunResult;
  let namespaced: RunResult;
  let sleeperPid: number;

  const ofOp = <K extends TraceRecord['op']>(op: K, pid?: number): Of<K>[] =>
    records.filter((r): r is Of<K> => r.op === op && (pid === undefined || r.tid === pid));

  before(async () => {
    work = await mkdtemp(join(tmpdir(), 'nestbox-monitor-test-'));
    const [plain, statics, i386] = await Promise.all([
      compileFixtures(['monitor-calls'], work),
      compileFixtures(['monitor-openat-count'], work, ['-static']),
      compileFixtures(['monitor-calls32'], work, ['-m32', '-nostdlib', '-static', '-fno-pie', '-no-pie']),
    ]);
    cgroup = await createTestCgroup();
    server = createServer((socket) => {
      socket.on('data', (chunk) => {
        received += chunk.toString();
        if (received.includes('login')) socket.write(ANSWER);
      });
      socket.on('error', () => undefined);
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const port = (server.address() as { port: number }).port;
    server32 = createServer((socket) => {
      socket.on('data', (chunk) => {
        received32 += chunk.toString();
        if (received32 === LOGIN32) socket.write(ANSWER);
      });
      socket.on('error', () => undefined);
    });
    await new Promise<void>((resolve) => server32.listen(0, '127.0.0.1', resolve));

    monitor = await MonitorLoader.launch(log);
    const recordsPath = await monitor.arm(cgroup.path);
    counter = await runInCgroup(cgroup.path, [statics['monitor-openat-count']!, String(OPENATS), '/etc/hostname']);
    calls = await runInCgroup(cgroup.path, [plain['monitor-calls']!, String(port)]);
    calls32 = await runInCgroup(cgroup.path, [i386['monitor-calls32']!, work, String((server32.address() as { port: number }).port)]);
    longArgv = await runInCgroup(cgroup.path, ['/bin/true', 'x'.repeat(5000)]);
    longLink = await runInCgroup(cgroup.path, ['ln', '-s', 'y'.repeat(4000), join(work, 'l'.repeat(200))]);
    // A process in a pid namespace of its own, as a linux machine's are: the id it has in there is its first
    // child's, 1 (the same numbering wineserver's trace uses).
    namespaced = await runInCgroup(cgroup.path, ['unshare', '--pid', '--fork', '/bin/sh', '-c', 'exec /bin/sleep 0.05']);
    outsider = await runInCgroup(null, [statics['monitor-openat-count']!, '10', '/etc/hostname']);
    // Still asleep when the session ends.
    const sleeper = spawn('sh', ['-c', 'echo $$ > "$0/cgroup.procs" && exec sleep 30', cgroup.path], { stdio: 'ignore' });
    sleeperPid = sleeper.pid!;
    await new Promise((resolve) => setTimeout(resolve, 500));
    ({ lost } = await monitor.disarm());
    records.push(...(await readRecordsFile(recordsPath)));
    sleeper.kill('SIGKILL');
  });

  after(async () => {
    await monitor?.discard();
    await cgroup?.remove();
    await new Promise((resolve) => server?.close(resolve));
    await new Promise((resolve) => server32?.close(resolve));
    if (work) await rm(work, { recursive: true, force: true });
  });

  /** A process's counts add up over its counts records. */
  const countsOf = (pid: number) => {
    const total: Record<string, number> = {};
    for (const record of ofOp('counts').filter((r) => r.pid === pid)) {
      for (const [name, count] of Object.entries(record.counts)) total[name] = (total[name] ?? 0) + count;
    }
    return total;
  };

  it('counts every system call of a process in the kernel: exactly 200,000 openat', () => {
    assert.equal(counter.code, 0, counter.stderr);
    const counts = ofOp('counts').filter((r) => r.pid === counter.pid);
    assert.equal(counts.length, 2, 'counts sent when the process became the program, and when it exited');
    // What the shell that joined the cgroup did before its exec is in the first, apart from the program's,
    // which start with the exec that made it.
    assert.equal(counts[0]!.counts.openat ?? 0, 0);
    assert.equal(counts[0]!.counts.execve ?? 0, 0);
    assert.equal(counts[1]!.counts.execve, 1);
    assert.equal(counts[1]!.counts.openat, OPENATS);
    assert.equal(counts[1]!.counts.close, OPENATS);
    assert.equal(counts[1]!.counts.exit_group, 1);
    const opens = ofOp('open', counter.pid).filter((r) => r.path === '/etc/hostname');
    assert.equal(
      opens.reduce((sum, r) => sum + 1 + (r.repeated ?? 0), 0),
      OPENATS,
      'and each openat decoded, the loop folded into records with their repeats',
    );
    assert.ok(opens.length <= OPENATS / 1000, `${opens.length} records for ${OPENATS} opens`);
    assert.ok(opens.every((r) => r.api === 'openat' && r.ret >= 0));
    assert.equal(lost, 0);
    assert.deepEqual(ofOp('lost'), []);
  });

  it('records the bytes a client sends over raw TCP, and what it receives', () => {
    assert.equal(calls.code, 0, calls.stderr);
    assert.ok(received.startsWith(LOGIN), 'the server got the login line');
    const sends = ofOp('send', calls.pid);
    const login = sends.find((r) => r.api === 'sendto');
    assert.ok(login, 'send() is recorded as sendto');
    assert.equal(Buffer.from(login.payload ?? '', 'hex').toString(), LOGIN);
    assert.equal(login.ret, LOGIN.length);
    const recv = ofOp('recv', calls.pid).find((r) => r.api === 'recvfrom');
    assert.equal(Buffer.from(recv?.payload ?? '', 'hex').toString(), ANSWER);
    const connect = ofOp('connect', calls.pid)[0];
    assert.equal(connect?.ret, 0);
    assert.deepEqual(connect.address, { family: 'inet', address: '127.0.0.1', port: (server.address() as { port: number }).port });
  });

  it('records the socket moved onto standard output, and what is written there as sent', () => {
    const socket = ofOp('socket', calls.pid)[0];
    assert.ok(socket && socket.ret >= 0);
    // (The shell that ran it restored its own standard output with dup2 first.)
    const dup = ofOp('dup', calls.pid).find((r) => r.api === 'dup2' && r.oldfd === socket.ret);
    assert.deepEqual(dup && [dup.oldfd, dup.newfd], [socket.ret, 1]);
    const viaStdout = ofOp('send', calls.pid).find((r) => r.api === 'write');
    assert.deepEqual(viaStdout && [viaStdout.fd, Buffer.from(viaStdout.payload ?? '', 'hex').toString()], [1, 'via-stdout\n']);
    assert.ok(received.endsWith('via-stdout\n'));
  });

  it("decodes a 32-bit (i386) program's calls as the 64-bit calls they are, socketcall's included", () => {
    assert.equal(calls32.code, 0, calls32.stderr);
    const pid = calls32.pid;
    const file = join(work, 'dropped32.txt');
    const renamed = join(work, 'renamed32.txt');
    const open = ofOp('open', pid).find((r) => r.path === file);
    assert.equal(open?.api, 'open');
    assert.ok(open.ret >= 0);
    assert.ok(ofOp('write', pid).some((r) => r.fd === open.ret && r.bytes === 16), 'the bytes written through it, summed');
    assert.ok(ofOp('closes', pid).some((r) => r.fds.includes(open.ret)), 'and its close (int 0x80 number 6)');
    assert.deepEqual(ofOp('rename', pid).map((r) => [r.api, r.from, r.to, r.ret]), [['rename', file, renamed, 0]]);
    assert.deepEqual(ofOp('unlink', pid).map((r) => [r.path, r.ret]), [[renamed, 0]]);
    const failedExec = ofOp('exec', pid).find((r) => r.ret < 0);
    assert.deepEqual(failedExec && [failedExec.path, failedExec.argv], ['/nonexistent/payload32', ['/nonexistent/payload32', '--from-i386']], 'argv read as 32-bit pointers');
    const mapped = ofOp('exec_map', pid);
    assert.deepEqual(mapped.map((r) => [r.call, r.length, r.prot, r.fd]), [['mmap', 4096, 5, -1]], 'mmap2, as mmap');
    // socketcall(SYS_SOCKET, SYS_CONNECT, SYS_SEND), then the direct socket and connect of newer kernels.
    assert.deepEqual(ofOp('socket', pid).map((r) => [r.family, r.type, r.ret]), [[2, 1, 3], [2, 1, 3]]);
    const port = (server32.address() as { port: number }).port;
    const connects = ofOp('connect', pid);
    assert.deepEqual(connects.map((r) => [r.address, r.ret]), [[{ family: 'inet', address: '127.0.0.1', port }, 0], [{ family: 'inet', address: '127.0.0.1', port }, 0]]);
    const sent = ofOp('send', pid);
    assert.deepEqual(sent.map((r) => [r.api, Buffer.from(r.payload ?? '', 'hex').toString()]), [['sendto', LOGIN32]]);
    assert.equal(received32, LOGIN32);
    const answer = ofOp('recv', pid).find((r) => r.api === 'read');
    assert.equal(Buffer.from(answer?.payload ?? '', 'hex').toString(), ANSWER, "the answer read from the socket");
    // The counts keep i386's own names: socketcall stays socketcall there.
    const counts = countsOf(pid);
    assert.equal(counts.socketcall, 3);
    assert.equal(counts.mmap2, 1);
  });

  it('records daemonizing: setsid, setpgid and the new name', () => {
    const call = (api: string) => ofOp('call', calls.pid).find((r) => r.api === api);
    assert.equal(call('setsid')?.ret, calls.pid, 'setsid returns the new session id');
    assert.deepEqual(call('setpgid')?.args, { pid: 0, pgid: 0 });
    assert.deepEqual(call('prctl')?.args, { option: 15, name: 'calls-renamed' });
    assert.ok(ofOp('rename_task', calls.pid).some((r) => r.name === 'calls-renamed'));
  });

  it('records mount attempts and capability changes with their arguments', () => {
    const call = (api: string) => ofOp('call', calls.pid).find((r) => r.api === api);
    assert.deepEqual(call('mount')?.args, { source: 'none', target: '/nonexistent-nestbox-mount', filesystemtype: 'tmpfs', mountflags: 2 });
    assert.equal(call('mount')?.ret, -2);
    assert.deepEqual(call('umount2')?.args, { target: '/nonexistent-nestbox-mount', flags: 2 });
    const capset = call('capset');
    assert.equal(capset?.ret, 0);
    assert.equal(capset.args.version, 0x20080522);
    assert.equal(capset.args.pid, 0);
    assert.equal(typeof capset.args.effective, 'number');
  });

  it('records sleeps with their length: nanosleep, clock_nanosleep, alarm, timerfd', () => {
    const sleeps = ofOp('sleep', calls.pid).map((r) => [r.api, Math.round(r.seconds * 1000) / 1000, r.ret]);
    assert.deepEqual(sleeps, [
      ['nanosleep', 0.02, 0],
      ['clock_nanosleep', 0.01, 0],
      // To an absolute deadline 30 ms ahead: its length counts from the call, not from its return.
      ['clock_nanosleep', 0.03, 0],
      ['alarm', 7200, 0],
      ['alarm', 0, 7200],
      ['timerfd_settime', 90, 0],
    ]);
  });

  it('names every call in its counts, decoded or not, and reports processes with their parents', () => {
    const counts = countsOf(calls.pid);
    for (const api of ['setsid', 'setpgid', 'nanosleep', 'clock_nanosleep', 'alarm', 'timerfd_create', 'timerfd_settime', 'socket', 'connect', 'sendto', 'recvfrom', 'dup2', 'write']) {
      assert.ok((counts[api] ?? 0) >= 1, `${api} counted`);
    }
    assert.equal(counts.alarm, 2);
    const identity = ofOp('identity', calls.pid)[0];
    assert.equal(identity?.pid, calls.pid);
    assert.ok(identity.ppid > 0);
    const exec = ofOp('exec', calls.pid).find((r) => r.ret === 0);
    assert.equal(exec?.api, 'execve');
    assert.deepEqual(exec.argv.slice(1), [String((server.address() as { port: number }).port)]);
    assert.deepEqual(ofOp('exit', calls.pid).map((r) => [r.api, r.code]), [['exit_group', 0]]);
  });

  it('keeps long strings whole: 4 KiB of argv, two paths of more than 4 KiB together', () => {
    const exec = ofOp('exec', longArgv.pid).find((r) => r.ret === 0);
    assert.equal(exec?.path, '/bin/true');
    assert.equal(exec.argv[0], '/bin/true');
    // argv is kept up to 4 KiB in all.
    assert.equal(exec.argv[1], 'x'.repeat(4096 - '/bin/true'.length - 1));
    assert.equal(longLink.code, 0, longLink.stderr);
    const link = ofOp('link', longLink.pid).find((r) => r.api === 'symlinkat' || r.api === 'symlink');
    assert.deepEqual(link && [link.target, link.path, link.ret], ['y'.repeat(4000), join(work, 'l'.repeat(200)), 0]);
  });

  it('at the end of a session, reports the sleeps still going on and the counts of processes still running', () => {
    const sleep = ofOp('sleep', sleeperPid).map((r) => [r.api, r.seconds, r.ret]);
    assert.deepEqual(sleep, [['clock_nanosleep', 30, -4]], 'interrupted (EINTR) by the end of the analysis');
    const counts = ofOp('counts').filter((r) => r.pid === sleeperPid);
    assert.equal(counts.length, 2, 'at its exec, and at the end of the session');
    assert.equal(counts[1]!.counts.clock_nanosleep, 1);
    assert.deepEqual(ofOp('exit', sleeperPid), []);
  });

  it("names each thread's id inside its pid namespace, read as the thread first runs, and only there", () => {
    assert.equal(namespaced.code, 0, namespaced.stderr);
    const inside = ofOp('identity').filter((r) => r.nstid !== undefined);
    assert.ok(inside.some((r) => r.comm === 'sleep'), `the sleep was seen with its second id: ${JSON.stringify(inside)}`);
    for (const identity of inside) {
      assert.equal(identity.nstid, 1, 'pid 1 of its namespace: nothing else lived in one');
      assert.notEqual(identity.tid, 1);
    }
    assert.ok(ofOp('identity').some((r) => r.comm === 'unshare' && r.nstid === undefined), 'unshare itself lived outside it');
    const plain = ofOp('identity', counter.pid);
    assert.ok(plain.length > 0);
    for (const identity of plain) assert.equal(identity.nstid, undefined, 'no namespace of its own: no second id');
  });

  it('records nothing of processes outside the cgroup', () => {
    assert.equal(outsider.code, 0);
    assert.deepEqual(records.filter((r) => r.tid === outsider.pid || (r.op === 'counts' && r.pid === outsider.pid)), []);
  });
});
