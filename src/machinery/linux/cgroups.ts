import { readFileSync } from 'node:fs';
import { mkdir, readdir, readFile, rmdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { internal, unavailable } from '../../errors.js';
import { isMachineId } from '../host/machine-id.js';

/**
 * The machine's cgroups. Two layouts are supported:
 *  - hybrid (v1 memory, pids, cpu and freezer hierarchies plus a controller-less v2 tree), as on the
 *    development machines: limits live in v1, the v2 group is for the tracer's filter and cgroup.kill;
 *  - unified (pure v2), as on current distributions: everything in one tree.
 * Groups are created under this process's own cgroup in each hierarchy, named `nestbox-machine-<id>`,
 * with two leaves: `sample` (what the tracer watches) and `support` (the virtual display).
 */

export type Leaf = 'sample' | 'support';
const LEAVES: Leaf[] = ['sample', 'support'];
const V1_CONTROLLERS = ['memory', 'pids', 'cpu', 'freezer'] as const;
type V1Controller = (typeof V1_CONTROLLERS)[number];
export const CGROUP_PREFIX = 'nestbox-machine-';

export interface CgroupLayout {
  kind: 'hybrid' | 'unified';
  /** This process's cgroup in the v2 tree: new groups are created below it. */
  v2Base: string;
  /** Hybrid only: this process's cgroup in each v1 hierarchy. */
  v1Base: Partial<Record<V1Controller, string>>;
}

export interface CgroupLimits {
  memoryBytes: number;
  pidsMax: number;
  /** Percent of one core. */
  cpuPercent: number;
}

interface MountEntry {
  root: string;
  mountPoint: string;
  fsType: string;
  superOptions: string[];
}

function readMounts(): MountEntry[] {
  return readFileSync('/proc/self/mountinfo', 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((line) => {
      const [left, right = ''] = line.split(' - ');
      const fields = left!.split(' ');
      const [fsType = '', , superOptions = ''] = right.split(' ');
      return { root: unescapeMount(fields[3]!), mountPoint: unescapeMount(fields[4]!), fsType, superOptions: superOptions.split(',') };
    });
}

const unescapeMount = (text: string) => text.replace(/\\([0-7]{3})/g, (_, octal: string) => String.fromCharCode(parseInt(octal, 8)));

/** Where a cgroup path of /proc/self/cgroup lives on disk, given the hierarchy's mount. */
function onDisk(mount: MountEntry, cgroupPath: string): string {
  const relative = mount.root === '/' ? cgroupPath : cgroupPath.slice(mount.root.length) || '/';
  return join(mount.mountPoint, relative);
}

let detected: CgroupLayout | undefined;

export function detectCgroupLayout(): CgroupLayout {
  if (detected) return detected;
  const mounts = readMounts();
  const own = new Map<string, string>();
  for (const line of readFileSync('/proc/self/cgroup', 'utf8').split('\n').filter(Boolean)) {
    const [, controllers = '', path = '/'] = line.split(/:(.*?):/);
    for (const controller of controllers.split(',')) own.set(controller, path);
  }
  const v2Mount = mounts.find((mount) => mount.fsType === 'cgroup2');
  if (!v2Mount) throw unavailable('no cgroup v2 hierarchy is mounted; nestbox needs one for its machines');
  const v2Base = onDisk(v2Mount, own.get('') ?? '/');
  const v1Base: CgroupLayout['v1Base'] = {};
  for (const controller of V1_CONTROLLERS) {
    const mount = mounts.find((entry) => entry.fsType === 'cgroup' && entry.superOptions.includes(controller));
    if (mount && own.has(controller)) v1Base[controller] = onDisk(mount, own.get(controller)!);
  }
  const kind = v1Base.memory && v1Base.pids ? 'hybrid' : 'unified';
  detected = { kind, v2Base, v1Base };
  return detected;
}

async function writeControl(path: string, value: string): Promise<void> {
  try {
    await writeFile(path, value);
  } catch (error) {
    throw internal(`cannot write ${value} to ${path}: ${(error as Error).message}`, { cause: error, context: { path, value } });
  }
}

async function removeDir(path: string): Promise<void> {
  await rmdir(path).catch((error: NodeJS.ErrnoException) => {
    if (error.code !== 'ENOENT') throw error;
  });
}

export class MachineCgroups {
  readonly name: string;

  constructor(
    readonly layout: CgroupLayout,
    machineId: string,
  ) {
    this.name = `${CGROUP_PREFIX}${machineId}`;
  }

  /** The machine's group in the v2 tree. */
  get v2Group(): string {
    return join(this.layout.v2Base, this.name);
  }

  v2Path(leaf: Leaf): string {
    return join(this.v2Group, leaf);
  }

  /** Every group of the machine, parents first. */
  private groups(): string[] {
    const bases = [this.layout.v2Base, ...(this.layout.kind === 'hybrid' ? Object.values(this.layout.v1Base) : [])];
    return bases.flatMap((base) => [join(base, this.name), ...LEAVES.map((leaf) => join(base, this.name, leaf))]);
  }

  /** The cgroup.procs files a process writes its pid into to enter `leaf` in every hierarchy. */
  procsFiles(leaf: Leaf): string[] {
    const bases = [this.layout.v2Base, ...(this.layout.kind === 'hybrid' ? Object.values(this.layout.v1Base) : [])];
    return bases.map((base) => join(base, this.name, leaf, 'cgroup.procs'));
  }

  async create(limits: CgroupLimits): Promise<void> {
    if (this.layout.kind === 'unified') await enableControllers(this.layout.v2Base);
    for (const group of this.groups()) await mkdir(group, { recursive: true });
    await this.applyLimits(limits);
  }

  private async applyLimits({ memoryBytes, pidsMax, cpuPercent }: CgroupLimits): Promise<void> {
    if (this.layout.kind === 'unified') {
      const group = this.v2Group;
      await writeControl(join(group, 'memory.max'), String(memoryBytes));
      await writeFile(join(group, 'memory.swap.max'), '0').catch(() => undefined);
      await writeControl(join(group, 'pids.max'), String(pidsMax));
      await this.limitCpu(cpuPercent);
      return;
    }
    const v1 = (controller: V1Controller) => join(this.layout.v1Base[controller]!, this.name);
    await writeControl(join(v1('memory'), 'memory.limit_in_bytes'), String(memoryBytes));
    await writeFile(join(v1('memory'), 'memory.memsw.limit_in_bytes'), String(memoryBytes)).catch(() => undefined);
    await writeControl(join(v1('pids'), 'pids.max'), String(pidsMax));
    await this.limitCpu(cpuPercent);
  }

  /**
   * Caps the machine's CPU time at `cpuPercent` of one core, or lifts the cap (null) for work of nestbox's
   * own that no sample can reach yet (Wine's boot before the sample is released).
   */
  async limitCpu(cpuPercent: number | null): Promise<void> {
    const period = 100_000;
    const quota = cpuPercent === null ? null : Math.round((cpuPercent / 100) * period);
    if (this.layout.kind === 'unified') {
      await writeControl(join(this.v2Group, 'cpu.max'), `${quota ?? 'max'} ${period}`);
      return;
    }
    const cpu = this.layout.v1Base.cpu;
    if (!cpu) return;
    await writeControl(join(cpu, this.name, 'cpu.cfs_period_us'), String(period));
    await writeControl(join(cpu, this.name, 'cpu.cfs_quota_us'), String(quota ?? -1));
  }

  /** Host pids of the processes in a leaf (or the whole machine). */
  async pids(leaf?: Leaf): Promise<number[]> {
    const path = join(leaf ? this.v2Path(leaf) : this.v2Group, 'cgroup.procs');
    const lists = await Promise.all(
      (leaf ? [path] : LEAVES.map((l) => join(this.v2Path(l), 'cgroup.procs'))).map((file) => readFile(file, 'utf8').catch(() => '')),
    );
    return lists.flatMap((text) => text.split('\n').filter(Boolean).map(Number));
  }

  /** True while any process of the leaf (or the machine) is alive; false once the groups are gone. */
  async populated(leaf?: Leaf): Promise<boolean> {
    const events = await readFile(join(leaf ? this.v2Path(leaf) : this.v2Group, 'cgroup.events'), 'utf8').catch(() => '');
    return /^populated 1$/m.test(events);
  }

  /** Freezes a leaf for a consistent memory dump; resolves once it is frozen. */
  async freeze(leaf: Leaf): Promise<void> {
    await writeControl(join(this.v2Path(leaf), 'cgroup.freeze'), '1');
    for (let tries = 0; tries < 100; tries++) {
      const events = await readFile(join(this.v2Path(leaf), 'cgroup.events'), 'utf8').catch(() => '');
      if (/^frozen 1$/m.test(events) || !/^populated 1$/m.test(events)) return;
      await sleep(10);
    }
  }

  /** Kills every process of the machine (or of one leaf) and waits (up to 5 s) for them to be gone. */
  async kill(leaf?: Leaf): Promise<void> {
    for (let tries = 0; tries < 500 && (await this.populated(leaf)); tries++) {
      if (tries % 50 === 0) await this.killOnce(leaf ? [leaf] : LEAVES);
      await sleep(10);
    }
  }

  private async killOnce(leaves: Leaf[]): Promise<void> {
    for (const leaf of leaves) {
      const killFile = join(this.v2Path(leaf), 'cgroup.kill');
      const killed = await writeFile(killFile, '1').then(
        () => true,
        () => false,
      );
      if (!killed) await this.killOneByOne(leaf);
    }
  }

  /** Kernels before 5.14 have no cgroup.kill: freeze, signal each process, thaw so the signals land. */
  private async killOneByOne(leaf: Leaf): Promise<void> {
    const freezer = this.layout.v1Base.freezer ? join(this.layout.v1Base.freezer, this.name, leaf, 'freezer.state') : undefined;
    if (freezer) await writeFile(freezer, 'FROZEN').catch(() => undefined);
    for (const pid of await this.pids(leaf)) {
      try {
        process.kill(pid, 'SIGKILL');
      } catch {
        // already gone
      }
    }
    if (freezer) await writeFile(freezer, 'THAWED').catch(() => undefined);
  }

  /** Kills what is left and removes every group; safe to call more than once. */
  async remove(): Promise<void> {
    await this.kill();
    for (const group of this.groups().reverse()) await removeDir(group);
  }
}

/** On pure v2 a group can only limit its children when its parent delegates the controllers. */
async function enableControllers(base: string): Promise<void> {
  const wanted = ['memory', 'pids', 'cpu'];
  const enabled = (await readFile(join(base, 'cgroup.subtree_control'), 'utf8')).split(/\s+/);
  const missing = wanted.filter((controller) => !enabled.includes(controller));
  if (missing.length === 0) return;
  try {
    await writeFile(join(base, 'cgroup.subtree_control'), missing.map((c) => `+${c}`).join(' '));
  } catch (error) {
    throw unavailable(
      `cannot enable the ${missing.join(', ')} cgroup controllers under ${base} (${(error as Error).message}); ` +
        'run nestbox in a cgroup of its own with those controllers delegated (e.g. systemd Delegate=yes)',
      { cause: error, context: { base } },
    );
  }
}

/** Names of machine groups present under this process's cgroups (for stale cleanup). */
export async function listMachineGroups(layout: CgroupLayout): Promise<string[]> {
  const bases = [layout.v2Base, ...Object.values(layout.v1Base)];
  const names = new Set<string>();
  for (const base of bases) {
    for (const entry of await readdir(base).catch(() => [])) {
      if (entry.startsWith(CGROUP_PREFIX) && isMachineId(entry.slice(CGROUP_PREFIX.length))) names.add(entry);
    }
  }
  return [...names];
}
