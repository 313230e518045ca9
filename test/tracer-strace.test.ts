import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { pino } from 'pino';
import type { BehaviorEvent, EventKind } from '../src/analysis/events.js';
import { createTracer } from '../src/machinery/linux/tracer/index.js';
import {
  compileFixtures,
  createTestCgroup,
  loopbackListener,
  ofKind,
  readEvents,
  runInCgroup,
  shellWorkload,
  LONG_NAME,
  ACCENTED_NAME,
  NEWLINE_NAME,
  type RunResult,
  type TestCgroup,
} from './fixtures/tracer-harness.js';

describe('strace fallback tracer (real strace, real cgroup)', { timeout: 120_000 }, () => {
  const log = pino({ level: 'silent' });
  let cgroup: TestCgroup;
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
    work = await mkdtemp(join(tmpdir(), 'nestbox-tracer-strace-'));
    const bin = await compileFixtures(['tracer-ptrace-check', 'tracer-memfd-exec', 'tracer-tour'], work);
    eventsPath = join(work, 'logs', 'events.jsonl');
    cgroup = await createTestCgroup();
    const listener = await loopbackListener();
    port = listener.port;
    const session = await createTracer(log, { prefer: 'strace' }).start({ cgroupV2Path: cgroup.path, eventsPath, log });
    assert.equal(session.name, 'strace');
    assert.ok(session.wrap, 'the fallback must launch the sample itself');

    // One strace runs everything, as it would run the sample's first process.
    await writeFile(join(work, 'script.sh'), shellWorkload(work, port));
    await writeFile(
      join(work, 'all.sh'),
      [
        `bash '${join(work, 'script.sh')}'`,
        `'${bin['tracer-ptrace-check']}' '${join(work, 'misbehaved')}'`,
        `'${bin['tracer-memfd-exec']}' /bin/echo memfd-ran 'from memory'`,
        `mkdir '${join(work, 'tour')}'`,
        `'${bin['tracer-tour']}' '${join(work, 'tour')}' ${port}`,
      ].join('\n'),
    );
    wrapped = session.wrap(['sh', join(work, 'all.sh')]);
    const all = await runInCgroup(cgroup.path, wrapped);
    assert.equal(all.code, 0, all.stderr);
    assert.equal(all.stdout, 'memfd-ran from memory\n');
    assert.deepEqual(await session.stop(), { lost: 0 });
    await listener.close();
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
    await cgroup?.remove();
    if (work) await rm(work, { recursive: true, force: true });
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
    const mine = events.filter((e) => e.pid === tour.pid);
    const dir = join(work, 'tour');
    assert.deepEqual(ofKind(mine, 'process.rename').map((e) => e.name), ['tour renamed', 'tour comm']);
    assert.deepEqual(
      ofKind(mine, 'file.write').filter((e) => e.path === join(dir, 'sub/two words.txt')).map((e) => e.bytes),
      [100],
    );
    assert.ok(ofKind(mine, 'file.rename').some((e) => e.from === join(dir, 'sub/two words.txt') && e.to === join(dir, 'sub/renamed.txt')));
    assert.deepEqual(
      ofKind(mine, 'file.link').map((e) => [e.from, e.to, e.symbolic]),
      [
        ['renamed.txt', join(dir, 'sub/link'), true],
        [join(dir, 'sub/renamed.txt'), join(dir, 'sub/hard'), false],
      ],
    );
    const udp = ofKind(mine, 'net.send').find((e) => e.family === 'inet');
    assert.deepEqual(udp && [udp.address, udp.port, udp.bytes], ['127.0.0.1', port, 4]);
    const udpSends = ofKind(mine, 'net.send').filter((e) => e.family === 'inet').map((e) => [e.address, e.port, e.bytes]);
    assert.deepEqual(udpSends, [
      ['127.0.0.1', port, 4],
      ['127.0.0.1', port, 5],
    ], 'sendto and sendmsg, addresses decoded');
    const bind = ofKind(mine, 'net.bind')[0];
    assert.deepEqual(bind && [bind.family, bind.address, bind.port, bind.ret], ['inet', '127.0.0.1', 0, 0]);
    assert.deepEqual(ofKind(mine, 'net.listen').map((e) => [e.fd, e.ret]), [[bind.fd, 0]]);
    assert.deepEqual(ofKind(mine, 'net.accept').map((e) => [e.fd, e.ret]), [[bind.fd, -11]]);
    const six = ofKind(mine, 'net.connect').find((e) => e.family === 'inet6');
    assert.deepEqual(six && [six.address, six.port], ['::1', port]);
    assert.equal(ofKind(mine, 'net.connect').find((e) => e.family === 'unix')?.address, join(dir, 'no-such.sock'));
    assert.ok(ofKind(mine, 'memory.exec_map').some((e) => e.call === 'mprotect' && e.prot === 5));
    assert.deepEqual(ofKind(mine, 'module.load').map((e) => e.call), ['init_module', 'delete_module']);
    assert.deepEqual(ofKind(mine, 'process.setid').map((e) => [e.call, e.ids]), [
      ['setresuid', [0, 0, 0]],
      ['setgid', [0]],
    ]);
    const threadWrite = ofKind(mine, 'file.write').find((e) => e.path === join(dir, 'from-thread'));
    assert.deepEqual(threadWrite && [threadWrite.bytes, threadWrite.pid], [6, tour.pid]);
    assert.notEqual(threadWrite?.tid, tour.pid, 'written by the thread');
    assert.deepEqual(ofKind(mine, 'process.fork'), [], 'a thread is not a new process');
    assert.deepEqual(ofKind(mine, 'process.kill').map((e) => [e.target, e.signal]), [[tour.pid, 0]]);
  });
});
