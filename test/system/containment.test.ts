import assert from 'node:assert/strict';
import { type ChildProcess, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, readFileSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { detectCgroupLayout } from '../../src/machinery/linux/cgroups.js';
import { machineIdRange } from '../../src/machinery/linux/host-ids.js';
import { linuxSettingsSchema } from '../../src/machinery/linux/settings.js';
import type { Machinery } from '../../src/machinery/types.js';
import { fixtureSource } from '../fixtures/tracer-harness.js';
import { assertNothingLeft, closeTestMachineries, runInMachine, sampleOutput, testMachinery, type RunOutcome } from '../linux-support.js';

/**
 * The containment suite: a sample on a real linux machine attacks the host as malware would
 * (test/fixtures/containment-attacks.py), and every attack must fail. Each is asserted from inside
 * (what the kernel answered) and, where the host can tell, from outside (the host is unchanged).
 * linux-sandbox.test.ts holds the file, network and resource attacks.
 */
/** Settings the host reads back after the attacks (modprobe exists only on kernels with modules). */
const HOST_SETTINGS = ['/proc/sys/kernel/core_pattern', '/proc/sys/kernel/modprobe', '/proc/sys/vm/swappiness', '/proc/sys/kernel/hostname'].filter((path) => existsSync(path));
const MEMORY_MB = 256;

describe('containment: a sample attacking the host from a linux machine', () => {
  after(closeTestMachineries);
  let machinery: Machinery;
  let sentinel: ChildProcess;
  let unixServer: Server;
  let abstractServer: Server;
  let connections = 0;
  const names = `nestbox-containment-${randomBytes(4).toString('hex')}`;
  const socketPath = `/tmp/${names}.sock`;
  const settingsBefore = new Map(HOST_SETTINGS.map((path) => [path, readFileSync(path, 'utf8')]));
  let outcome: RunOutcome;
  let attacks: Map<string, Record<string, unknown>>;
  /** Host uid and gid lines of the sample's processes, read from the host while it runs. */
  let sampleIds: string[] = [];
  let memoryLimit = '';

  const listen = async (address: string): Promise<Server> => {
    const server = createServer((socket) => {
      connections++;
      socket.end('HOST-SECRET\n');
    });
    await new Promise<void>((resolve) => server.listen(address, resolve));
    return server;
  };

  before(async () => {
    machinery = testMachinery({ memory_mb: MEMORY_MB, pids_max: 64, disk_mb: 64 });
    await machinery.prepare();
    sentinel = spawn('sleep', ['600'], { stdio: 'ignore' });
    unixServer = await listen(socketPath);
    abstractServer = await listen(`\0${names}`);
    const args = [
      `sentinel=${sentinel.pid}`,
      `socket=${socketPath}`,
      `abstract=${names}`,
      `disk=${hostRootDevice()}`,
      'linger=2',
    ];
    outcome = await runInMachine(machinery, {
      timeoutSeconds: 60,
      sample: { name: 'attacks.py', content: readFileSync(fixtureSource('containment-attacks.py')) },
      options: { arguments: args.join(' ') },
      during: async (machineId) => {
        // The sample marks the end of its attacks in its disk, then lingers while the host looks at it.
        const done = join(linuxSettingsSchema.parse({}).run_dir, machineId, 'rw', 'upper', 'tmp', 'attacks-done');
        await waitFor(() => existsSync(done), 45_000);
        sampleIds = sampleProcessIds(machineId);
        memoryLimit = readMemoryLimit(machineId);
      },
    });
    attacks = new Map(
      sampleOutput(outcome)
        .filter((line) => line.startsWith('ATTACK '))
        .map((line) => {
          const [, name = '', json = '{}'] = /^ATTACK (\S+) (.*)$/.exec(line) ?? [];
          return [name, JSON.parse(json) as Record<string, unknown>];
        }),
    );
  });

  after(async () => {
    sentinel?.kill('SIGKILL');
    await new Promise<void>((resolve) => unixServer?.close(() => resolve()) ?? resolve());
    await new Promise<void>((resolve) => abstractServer?.close(() => resolve()) ?? resolve());
    rmSync(socketPath, { force: true });
  });

  const attack = (name: string): Record<string, unknown> => {
    const found = attacks.get(name);
    assert.ok(found, `attack ${name} reported nothing:\n${outcome.log}`);
    assert.equal(found.crashed, undefined, `attack ${name} crashed: ${String(found.crashed)}`);
    return found;
  };

  it('ran every attack to the end, and the machine left nothing behind', () => {
    assert.ok(sampleOutput(outcome).includes('ATTACKS DONE'), outcome.log);
    assert.equal(attacks.size, 11, [...attacks.keys()].join(' '));
    assertNothingLeft(assert.deepEqual, outcome.machineId);
  });

  it('runs the sample as an unprivileged host id, while it is root of a whole system inside', () => {
    const range = machineIdRange(linuxSettingsSchema.parse({}).host_id_base);
    assert.ok(sampleIds.length > 0, 'no process of the sample was seen from the host');
    for (const line of sampleIds) {
      const ids = line.split(/\s+/).slice(1).map(Number);
      assert.equal(ids.length, 4, line);
      for (const id of ids) assert.ok(id >= range.base && id < range.base + range.count, `host id ${id} is outside the machine's range (${line})`);
    }
    const identity = attack('identity');
    assert.equal(identity.uid, 0);
    assert.equal(identity.etc_owner, 0, 'the guest root shows root as the owner of /etc/passwd');
    assert.equal(identity.root_owner, 0);
    assert.equal(identity.write_etc, 'OK', 'root may change /etc in its own disk');
    assert.equal(identity.shadow_group, 42, "the guest's other ids are mapped too");
  });

  it('cannot write any kernel setting under /proc/sys, not even back to its own value', () => {
    const sys = attack('proc-sys');
    assert.ok((sys.files as number) > 500, `only ${String(sys.files)} files were tried`);
    assert.deepEqual(sys.not_refused, [], `counts: ${JSON.stringify(sys.counts)}`);
    assert.ok(['EACCES', 'EROFS'].includes(sys.core_pattern as string), String(sys.core_pattern));
    if (existsSync('/proc/sys/kernel/modprobe')) assert.ok(['EACCES', 'EROFS'].includes(sys.modprobe as string), String(sys.modprobe));
    assert.equal(sys.remount_writable, 'EPERM');
    for (const [path, value] of settingsBefore) assert.equal(readFileSync(path, 'utf8'), value, `${path} changed on the host`);
  });

  it('cannot open the magic SysRq trigger, or register or mount a binfmt_misc handler', () => {
    assert.notEqual(attack('sysrq-trigger').open, 'OK');
    const binfmt = attack('binfmt-misc');
    assert.notEqual(binfmt.register, 'OK');
    assert.equal(binfmt.mount, 'EPERM');
  });

  it("cannot reach or change the host's cgroups", () => {
    const cgroups = attack('cgroups');
    assert.equal(cgroups.mount_v2, 'EPERM');
    assert.equal(cgroups.mount_v1_memory, 'EPERM');
    assert.equal(cgroups.host_tree, 'ENOENT');
    // Its cgroup namespace is rooted at its own leaf: it sees no host cgroup path.
    for (const line of cgroups.own_cgroup as string[]) assert.match(line, /:\/$/);
    assert.equal(memoryLimit, String(MEMORY_MB * 2 ** 20), "the machine's memory limit changed");
  });

  it('cannot signal or ptrace a host process', () => {
    const signals = attack('signal');
    assert.equal(signals.probe, 'ESRCH');
    assert.equal(signals.kill, 'ESRCH');
    assert.equal(signals.pidfd_open, 'ESRCH');
    assert.equal(attack('ptrace').attach_host, 'ESRCH');
    assert.equal(attack('kill-all').kill, 'OK', 'kill(-1) reaches the machine');
    assert.equal(sentinel.exitCode, null, 'the host process was killed');
    assert.equal(sentinel.signalCode, null, 'the host process was killed');
  });

  it("cannot connect to the host's unix sockets, by path or abstract name", () => {
    const sockets = attack('unix-sockets');
    assert.equal(sockets.path, 'ENOENT');
    assert.equal(sockets.abstract, 'ECONNREFUSED');
    assert.equal(sockets.docker, 'ENOENT');
    assert.equal(sockets.systemd, 'ENOENT');
    assert.equal(connections, 0);
    assert.ok(!outcome.log.includes('HOST-SECRET'));
  });

  it('cannot make a device node for the host disk or kernel memory', () => {
    const devices = attack('device-nodes');
    assert.equal(devices.host_disk, 'EPERM');
    assert.equal(devices.kernel_memory, 'EPERM');
    assert.deepEqual(
      (devices.devices_seen as string[]).filter((name) => !['console', 'core', 'fd', 'full', 'mqueue', 'null', 'ptmx', 'pts', 'random', 'shm', 'stderr', 'stdin', 'stdout', 'tty', 'urandom', 'zero'].includes(name)),
      [],
    );
  });

  it('cannot open a host file by handle (the "shocker" escape)', () => {
    assert.equal(attack('open-by-handle').open_by_handle_at, 'EPERM');
  });
});

/** Host uid and gid lines ("<name> <real> <effective> <saved> <fs>") of every process in the sample's cgroup. */
function sampleProcessIds(machineId: string): string[] {
  const procs = join(detectCgroupLayout().v2Base, `nestbox-machine-${machineId}`, 'sample', 'cgroup.procs');
  const lines: string[] = [];
  for (const pid of readFileSync(procs, 'utf8').split('\n').filter(Boolean)) {
    try {
      const status = readFileSync(`/proc/${pid}/status`, 'utf8');
      const name = /^Name:\s*(.*)$/m.exec(status)?.[1] ?? '';
      for (const field of ['Uid', 'Gid']) lines.push(`${name} ${new RegExp(`^${field}:(.*)$`, 'm').exec(status)?.[1]?.trim() ?? ''}`);
    } catch {
      // exited meanwhile
    }
  }
  return lines;
}

function readMemoryLimit(machineId: string): string {
  const layout = detectCgroupLayout();
  const group = `nestbox-machine-${machineId}`;
  const file = layout.kind === 'hybrid' ? join(layout.v1Base.memory!, group, 'memory.limit_in_bytes') : join(layout.v2Base, group, 'memory.max');
  return readFileSync(file, 'utf8').trim();
}

/** major:minor of the host's root file system, from the host's mount table. */
function hostRootDevice(): string {
  const line = readFileSync('/proc/self/mountinfo', 'utf8').split('\n').find((entry) => entry.split(' ')[4] === '/');
  return line?.split(' ')[2] ?? '8:0';
}

async function waitFor(condition: () => boolean, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`not done after ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}
