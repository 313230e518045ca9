import { readFileSync } from 'node:fs';
import { availableParallelism, totalmem } from 'node:os';
import { ipToNumber, numberToIp } from '../util/ipv4.js';

/**
 * The linux machines a configuration without a `machines:` list gets: as many as this host can run at
 * once, so that a fresh install analyses several samples in parallel instead of one at a time.
 */

/** What the host offers nestbox: usable cores and memory (the smaller of the host's and its cgroup's). */
export interface HostResources {
  cores: number;
  memoryMb: number;
}

/** The configuration's `machines_auto` section. */
export interface AutoMachineSettings {
  /** 0: sized from the host; otherwise exactly this many. */
  count: number;
  /** Memory counted for each machine, in MiB. */
  machine_mb: number;
  /** Memory left to the host, processing and the database, in MiB. */
  reserve_mb: number;
  /** At most this many when sized from the host. */
  max: number;
}

/**
 * One machine per core (a linux machine may use one core, its cpu_percent default), as many as the
 * memory left after the reserve holds at `machine_mb` each, at most `max`, and always at least one.
 */
export function autoMachineCount(host: HostResources, settings: AutoMachineSettings): number {
  if (settings.count > 0) return settings.count;
  const byMemory = Math.floor((host.memoryMb - settings.reserve_mb) / settings.machine_mb);
  return Math.max(1, Math.min(host.cores, byMemory, settings.max));
}

/**
 * The default machines' names: `linux<n>`, or `<node>-linux<n>` when cluster.node_name is set, because
 * machine names are unique across a cluster (src/cluster/node-identity.ts hands the rule to the cluster).
 */
export function defaultMachineName(n: number, nodeName = ''): string {
  return nodeName ? `${nodeName}-linux${n}` : `linux${n}`;
}

const FIRST_BLOCK = ipToNumber('10.200.0.0');

/**
 * Machine `n` (from 1) of `count`. Linux machines get their real addresses per task (a /30 of
 * 10.200.0.0/16 for each task network, machinery/host/network/addressing.ts), so these are only what
 * /machines/list shows; each machine still gets its own /30 there, the first being today's 10.200.0.1-2.
 */
export function defaultMachines(count: number, nodeName = ''): Array<{ name: string; ip: string; resultserver_ip: string }> {
  return Array.from({ length: count }, (_, index) => ({
    name: defaultMachineName(index + 1, nodeName),
    ip: numberToIp(FIRST_BLOCK + index * 4 + 2),
    resultserver_ip: numberToIp(FIRST_BLOCK + index * 4 + 1),
  }));
}

/** This host's cores and memory, limited by the cgroup nestbox runs in (a container's quota). */
export function hostResources(): HostResources {
  const quota = cgroupCpuQuota();
  const cores = Math.max(1, Math.min(availableParallelism(), quota === undefined ? Infinity : Math.ceil(quota)));
  const memoryBytes = Math.min(totalmem(), cgroupMemoryLimit() ?? Infinity);
  return { cores, memoryMb: Math.floor(memoryBytes / 1024 ** 2) };
}

/** cgroup v2 `cpu.max` ("max 100000" or "200000 100000"): cores' worth of CPU time, undefined when unlimited. */
function cgroupCpuQuota(): number | undefined {
  const [quota, period] = readCgroupFile('cpu.max')?.split(/\s+/) ?? [];
  const value = Number(quota) / Number(period);
  return Number.isFinite(value) && value > 0 ? value : undefined;
}

/** cgroup v2 `memory.max` in bytes, undefined when unlimited. */
function cgroupMemoryLimit(): number | undefined {
  const value = Number(readCgroupFile('memory.max'));
  return Number.isFinite(value) && value > 0 ? value : undefined;
}

/** A file of the cgroup (v2) this process is in, as /proc/self/cgroup names it ("0::/path"). */
function readCgroupFile(name: string): string | undefined {
  try {
    const path = /^0::(\/.*)$/m.exec(readFileSync('/proc/self/cgroup', 'utf8'))?.[1] ?? '/';
    return readFileSync(`/sys/fs/cgroup${path === '/' ? '' : path}/${name}`, 'utf8').trim();
  } catch {
    return undefined;
  }
}
