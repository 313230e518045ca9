import assert from 'node:assert/strict';
import { execFileSync, spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, readFileSync, rmSync, statfsSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { detectCgroupLayout } from '../../src/machinery/linux/cgroups.js';
import type { Machinery } from '../../src/machinery/types.js';
import { assertNothingLeft, closeTestMachineries, runInMachine, sampleOutput, testMachinery, workDir } from '../linux-support.js';

/**
 * The sandbox of the linux machinery on this host, for real: the guest root, user/pid/mount/uts/ipc/
 * cgroup namespaces, the overlay disk on a size-limited tmpfs, cgroup limits and the seccomp filter.
 * Every containment check is something a sample tries that must fail, asserted from both sides.
 */
describe('linux machine sandbox', () => {
  // Spare networks and waiting tracers of every machinery made here must not outlive the tests.
  after(closeTestMachineries);
  let machinery: Machinery;
  before(async () => {
    machinery = testMachinery({ memory_mb: 256, pids_max: 64, disk_mb: 32 });
    await machinery.prepare();
  });

  it('runs a shell script to completion, children included, and keeps the files it drops', async () => {
    const outcome = await runInMachine(machinery, {
      sample: {
        name: 'dropper.sh',
        content: [
          '#!/bin/sh',
          'echo payload-one > /tmp/one.txt',
          'mkdir -p /root/.config/evil && printf "%s" persistent > /root/.config/evil/run.conf',
          'echo "# changed" >> /etc/hosts.allow',
          'rm /etc/debian_version',
          // A detached grandchild outlives the script: the run waits for it.
          '(sleep 0.5; echo late > /tmp/late.txt) &',
          'echo script-done',
        ].join('\n'),
      },
    });
    assert.equal(outcome.result.ended, 'exited');
    assert.ok(sampleOutput(outcome).includes('script-done'));
    const dropped = Object.fromEntries(outcome.files.map((file) => [file.filepath, file.path]));
    assert.deepEqual(Object.keys(dropped).sort(), ['/etc/hosts.allow', '/root/.config/evil/run.conf', '/tmp/late.txt', '/tmp/one.txt']);
    assert.equal(readFileSync(join(outcome.paths.dir, dropped['/tmp/late.txt']!), 'utf8'), 'late\n');
    assert.match(dropped['/tmp/one.txt']!, /^files\/[0-9a-f]{16}_one\.txt$/);
    assert.equal(readFileSync(join(outcome.paths.dir, dropped['/root/.config/evil/run.conf']!), 'utf8'), 'persistent');
    assertNothingLeft(assert.deepEqual, outcome.machineId);
  });

  it('runs a C program compiled here, as a sample would be', async () => {
    const source = join(workDir, 'hello.c');
    const binary = join(workDir, 'hello-elf');
    writeFileSync(source, '#include <stdio.h>\n#include <unistd.h>\nint main(int c, char **v) { printf("hello from C, pid %d, arg %s\\n", getpid(), c > 1 ? v[1] : "-"); return 3; }\n');
    execFileSync('gcc', ['-O1', '-o', binary, source]);
    const outcome = await runInMachine(machinery, { sample: { name: 'hello', content: readFileSync(binary) }, options: { arguments: 'first second' } });
    assert.equal(outcome.result.ended, 'exited');
    // pid 1 is the machine's init, so the sample is pid 2 of its own pid namespace.
    assert.ok(sampleOutput(outcome).includes('hello from C, pid 2, arg first'), outcome.log);
    assert.match(outcome.log, /analysis package: elf/);
    assertNothingLeft(assert.deepEqual, outcome.machineId);
  });

  it('gives the sample no host file, no host process, no host /sys or path, no capability and no new namespace', async () => {
    const marker = `marker-${randomBytes(6).toString('hex')}`;
    const hostFiles = ['/root', '/tmp', '/var/tmp'].map((dir) => join(dir, `nestbox-${marker}`));
    for (const file of hostFiles) writeFileSync(file, `${marker}-content\n`);
    try {
      const outcome = await runInMachine(machinery, {
        sample: {
          name: 'probe.sh',
          content: [
            '#!/bin/bash',
            `for f in ${hostFiles.join(' ')}; do cat "$f" 2>/dev/null && echo "READ $f"; done`,
            `grep -rl ${marker} /root /tmp /var/tmp /etc 2>/dev/null | grep -v probe.sh | sed 's/^/FOUND /'`,
            'echo "PIDS $(ls /proc | grep -c "^[0-9]")"',
            'echo "INIT $(tr "\\0" " " < /proc/1/cmdline)"',
            `ps -eo comm= | grep -qx node && echo HOST-NODE-VISIBLE`,
            'echo "SYS $(ls -A /sys | wc -l)"',
            'grep -E "^(CapEff|CapBnd|NoNewPrivs|Seccomp):" /proc/self/status',
            'unshare --user true 2>/dev/null && echo UNSHARE-OK',
            'unshare --mount true 2>/dev/null && echo UNSHARE-MOUNT-OK',
            'mount -t tmpfs x /mnt 2>/dev/null && echo MOUNT-OK',
            'echo "UID $(id -u) HOST $(hostname)"',
            'echo "HOST-PATHS $(cat /proc/self/mountinfo /proc/self/cgroup | grep -c -e nestbox -e /var/lib -e /run/)"',
          ].join('\n'),
        },
      });
      const output = sampleOutput(outcome);
      assert.ok(!outcome.log.includes(`${marker}-content`), 'a host marker file was read');
      assert.deepEqual(output.filter((line) => /^(READ|FOUND) /.test(line)), []);
      const pids = Number(output.find((line) => line.startsWith('PIDS '))?.slice(5));
      assert.ok(pids >= 2 && pids <= 6, `the sample sees ${pids} processes`);
      assert.ok(output.some((line) => line.startsWith('INIT /sbin/init /bin/bash')), outcome.log);
      assert.ok(!output.includes('HOST-NODE-VISIBLE'));
      assert.ok(output.includes('SYS 0'));
      assert.ok(output.includes('CapEff:\t0000000000000000'));
      assert.ok(output.includes('CapBnd:\t0000000000000000'));
      assert.ok(output.includes('NoNewPrivs:\t1'));
      assert.ok(output.includes('Seccomp:\t2'));
      for (const escape of ['UNSHARE-OK', 'UNSHARE-MOUNT-OK', 'MOUNT-OK']) assert.ok(!output.includes(escape), escape);
      assert.ok(output.includes('UID 0 HOST linux1'));
      assert.ok(output.includes('HOST-PATHS 0'), 'mounts and cgroups seen inside name no host path');
      assertNothingLeft(assert.deepEqual, outcome.machineId);
    } finally {
      for (const file of hostFiles) rmSync(file, { force: true });
    }
  });

  it('lets the sample use ptrace and memfd_create as on a real machine', async () => {
    const outcome = await runInMachine(machinery, {
      sample: {
        name: 'calls.py',
        content: [
          'import ctypes, os, signal, time',
          'libc = ctypes.CDLL(None, use_errno=True)',
          'fd = os.memfd_create("payload")',
          'print("MEMFD", fd >= 0)',
          'pid = os.fork()',
          'if pid == 0:',
          '    time.sleep(10)',
          '    os._exit(0)',
          'print("PTRACE_ATTACH", libc.ptrace(16, pid, 0, 0), ctypes.get_errno())',
          'os.kill(pid, signal.SIGKILL)',
          'os.waitpid(pid, 0)',
        ].join('\n'),
      },
    });
    const output = sampleOutput(outcome);
    assert.ok(output.includes('MEMFD True'), outcome.log);
    assert.ok(output.includes('PTRACE_ATTACH 0 0'), outcome.log);
    assertNothingLeft(assert.deepEqual, outcome.machineId);
  });

  describe('with a service listening on the host loopback', () => {
    let server: Server;
    let port = 0;
    let connections = 0;
    before(async () => {
      server = createServer((socket) => {
        connections++;
        socket.end('HOST-SECRET\n');
      });
      await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
      port = (server.address() as { port: number }).port;
    });
    after(() => new Promise<void>((resolve) => server.close(() => resolve())));

    it('cannot reach it', async () => {
      const outcome = await runInMachine(machinery, {
        sample: {
          name: 'reach.sh',
          content: [
            '#!/bin/bash',
            `curl -s --max-time 2 http://127.0.0.1:${port}/ && echo CURL-OK`,
            `timeout 2 bash -c 'cat < /dev/tcp/127.0.0.1/${port}' && echo TCP-OK`,
            'echo probes-done',
          ].join('\n'),
        },
      });
      assert.ok(sampleOutput(outcome).includes('probes-done'));
      assert.ok(!outcome.log.includes('HOST-SECRET'));
      assert.ok(!outcome.log.includes('CURL-OK') && !outcome.log.includes('TCP-OK'));
      assert.equal(connections, 0);
      assertNothingLeft(assert.deepEqual, outcome.machineId);
    });
  });

  it('does not survive the timeout: every process is killed', async () => {
    const started = Date.now();
    const outcome = await runInMachine(machinery, {
      timeoutSeconds: 2,
      sample: { name: 'stay.sh', content: '#!/bin/sh\ntrap "" TERM HUP INT\n(trap "" TERM HUP INT; while :; do sleep 1; done) &\nsetsid sh -c "while :; do sleep 1; done" &\nwhile :; do sleep 1; done\n' },
    });
    assert.equal(outcome.result.ended, 'timeout');
    assert.ok(Date.now() - started < 8000, `took ${Date.now() - started} ms`);
    assertNothingLeft(assert.deepEqual, outcome.machineId);
  });

  it('runs until the timeout when it is enforced, even after the sample exited', async () => {
    const outcome = await runInMachine(machinery, { timeoutSeconds: 2, enforceTimeout: true, sample: { name: 'quick.sh', content: 'echo quick\n' } });
    assert.equal(outcome.result.ended, 'timeout');
    assert.ok(outcome.timings.run >= 1900, `ran ${outcome.timings.run} ms`);
  });

  it('holds a fork bomb to the process limit while the host stays responsive', async () => {
    const outcome = await runInMachine(machinery, {
      timeoutSeconds: 4,
      sample: { name: 'bomb.sh', content: '#!/bin/bash\nbomb() { bomb | bomb & }\nbomb\n' },
      during: async (machineId) => {
        await new Promise((resolve) => setTimeout(resolve, 2000));
        const layout = detectCgroupLayout();
        const group = layout.kind === 'hybrid' ? join(layout.v1Base.pids!, `nestbox-machine-${machineId}`) : join(layout.v2Base, `nestbox-machine-${machineId}`);
        const current = Number(readFileSync(join(group, 'pids.current'), 'utf8'));
        assert.ok(current <= 64, `${current} processes`);
        const before = performance.now();
        const probe = spawnSync('/bin/true');
        assert.equal(probe.status, 0);
        assert.ok(performance.now() - before < 1000, 'the host could not start a process within a second');
      },
    });
    assert.equal(outcome.result.ended, 'timeout');
    assertNothingLeft(assert.deepEqual, outcome.machineId);
  });

  it('holds a CPU burner to its CPU share', async () => {
    const limited = testMachinery({ cpu_percent: 50 });
    await limited.prepare();
    let throttled = 0;
    const outcome = await runInMachine(limited, {
      sample: { name: 'burn.sh', content: '#!/bin/sh\nfor i in 1 2; do timeout 2 sh -c "while :; do :; done" & done\nwait\necho burnt\n' },
      // The burners start when the sample does, which on a busy host is not at a fixed time: the
      // machine's cgroup is read until it shows the throttling, for as long as the burners can run.
      during: async (machineId) => {
        const layout = detectCgroupLayout();
        const stat = join(layout.kind === 'hybrid' ? layout.v1Base.cpu! : layout.v2Base, `nestbox-machine-${machineId}`, 'cpu.stat');
        for (let waited = 0; waited < 10_000 && throttled <= 5; waited += 250) {
          await new Promise((resolve) => setTimeout(resolve, 250));
          if (!existsSync(stat)) break;
          throttled = Number(/nr_throttled (\d+)/.exec(readFileSync(stat, 'utf8'))?.[1]);
        }
      },
    });
    assert.ok(sampleOutput(outcome).includes('burnt'));
    assert.ok(throttled > 5, `throttled ${throttled} times`);
    assertNothingLeft(assert.deepEqual, outcome.machineId);
  });

  it('kills a memory hog at the memory limit', async () => {
    const outcome = await runInMachine(machinery, {
      sample: { name: 'hog.sh', content: '#!/bin/bash\npython3 -c "b = b\'x\' * 2 ** 30; print(\'ALLOCATED\')"\necho "exit $?"\n' },
    });
    const output = sampleOutput(outcome);
    assert.ok(!output.includes('ALLOCATED'));
    assert.ok(output.includes('exit 137'), outcome.log);
    assertNothingLeft(assert.deepEqual, outcome.machineId);
  });

  it('cannot fill the host disk: its writes stop at the machine disk size', async () => {
    const freeBefore = statfsSync('/').bavail * statfsSync('/').bsize;
    const outcome = await runInMachine(machinery, {
      sample: {
        name: 'fill.sh',
        content: '#!/bin/bash\ndd if=/dev/zero of=/tmp/fill bs=1M count=200 2>/dev/null; echo "dd $?"\ndd if=/dev/zero of=/dev/shm/fill bs=1M count=200 2>/dev/null; echo "shm $?"\nls -l /tmp/fill | awk \'{print "size", $5}\'\n',
      },
    });
    const output = sampleOutput(outcome);
    assert.ok(output.includes('dd 1'), outcome.log);
    assert.ok(output.includes('shm 1'), outcome.log);
    const size = Number(output.find((line) => line.startsWith('size '))?.slice(5));
    assert.ok(size <= 32 * 2 ** 20, `wrote ${size} bytes`);
    const freeAfter = statfsSync('/').bavail * statfsSync('/').bsize;
    assert.ok(freeBefore - freeAfter < 100 * 2 ** 20, 'the host disk lost more than the dropped copy');
    assertNothingLeft(assert.deepEqual, outcome.machineId);
  });
});
