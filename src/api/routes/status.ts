import { readFile } from 'node:fs/promises';
import { diskSpace } from '../disk-space.js';
import { cpus, hostname, loadavg } from 'node:os';
import type { AppContext } from '../../app.js';
import { COUNTED_STATUSES } from '../../db/tasks.js';
import { clusterStatus } from '../cluster-status.js';
import { NESTBOX_RELEASE, NESTBOX_VERSION, PROTOCOL_VERSION } from '../../version.js';
import type { Registrar } from './registrar.js';

/** GET /cuckoo/status and its neutral alias /sandbox/status. */
export function statusRoutes(r: Registrar, ctx: AppContext): void {
  r.get(['/cuckoo/status', '/sandbox/status'], async () => serverStatus(ctx), { v1: true });
}

/**
 * Cuckoo's status of this host (load, memory, disk space), with the tasks of the whole database and the
 * machines of every live node: a cluster answers as one sandbox. `nodes` (nestbox's) shows each node
 * by name, so Cuckoo's fields keep their meaning and type.
 */
export async function serverStatus(ctx: AppContext) {
  const [counts, cluster, diskspace] = await Promise.all([
    ctx.stores.tasks.countByStatus(),
    clusterStatus(ctx),
    diskSpace({ analyses: ctx.layout.analyses, binaries: ctx.layout.binaries, temporary: ctx.layout.tmp }),
  ]);
  const tasks: Record<string, number> = { total: Object.values(counts).reduce((a, b) => a + b, 0) };
  for (const status of COUNTED_STATUSES) tasks[status] = counts[status] ?? 0;
  return {
    cpu_count: cpus().length,
    cpuload: loadavg(),
    diskspace,
    hostname: hostname(),
    machines: cluster.machines,
    ...(await memoryInfo()),
    nestbox_version: NESTBOX_RELEASE,
    nodes: Object.fromEntries(cluster.nodes.map((node) => [node.name, node])),
    processes: {},
    protocol_version: PROTOCOL_VERSION,
    tasks,
    version: NESTBOX_VERSION,
  };
}

/** Cuckoo 2.0.3+: `memory` is percent used; `memavail` and `memtotal` are in kB. */
async function memoryInfo() {
  try {
    const text = await readFile('/proc/meminfo', 'utf8');
    const field = (name: string) => Number(new RegExp(`^${name}:\\s+(\\d+)`, 'm').exec(text)?.[1]);
    const total = field('MemTotal');
    const available = field('MemAvailable');
    if (!Number.isFinite(total) || !Number.isFinite(available)) throw new Error('incomplete');
    return { memavail: available, memory: 100 - (100 * available) / total, memtotal: total };
  } catch {
    return { memavail: null, memory: null, memtotal: null };
  }
}
