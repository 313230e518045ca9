import type { AppContext } from '../../../app.js';
import type { TaskCountRow } from '../../../db/distributed-tasks.js';
import type { MachineRow, NodeRow } from '../../../db/schema.js';
import type { Registrar } from '../registrar.js';
import { diskSpace } from '../../disk-space.js';
import { distributedPaths } from '../../distributed/paths.js';
import { ENDED } from '../../distributed/task-json.js';

type Tally = { pending: number; processing: number; finished: number; deleted: number };
const GROUPS = ['all', 'prio1', 'prio2', 'today', 'today1', 'today2'] as const;

/** GET /api/status (cuckoo-compat §7.2): the nodes' last status, task counts and the main node's disk space. */
export function distributedStatusRoutes(r: Registrar, ctx: AppContext): void {
  r.get(distributedPaths('/status'), async () => {
    const [nodes, machines, counts, issued, space] = await Promise.all([
      ctx.stores.distributedNodes.list(),
      ctx.stores.distributedNodes.machinesByNode(),
      ctx.stores.distributedTasks.counts(startOfToday()),
      ctx.stores.distributedTasks.highestIssuedId(),
      diskSpace({ reports: ctx.layout.analyses, samples: ctx.layout.binaries }),
    ]);
    return {
      success: true,
      nodes: Object.fromEntries(nodes.flatMap((node) => statusOf(node, machines.get(node.name) ?? []))),
      tasks: tasksTally(counts, issued),
      dist: { diskspace: space },
      timestamp: Math.floor(Date.now() / 1000),
    };
  });
}

/**
 * A remote node's last /cuckoo/status with when it was read (none before the first read); a nestbox
 * node's registration, heartbeat and machines.
 */
function statusOf(node: NodeRow, machines: readonly MachineRow[]): Array<[string, unknown]> {
  if (node.role === 'remote') return node.status === null ? [] : [[node.name, JSON.parse(node.status) as unknown]];
  const heartbeat = node.heartbeat_on === null ? null : Math.floor(Date.parse(node.heartbeat_on) / 1000);
  return [
    [
      node.name,
      {
        heartbeat_on: node.heartbeat_on,
        machines: { available: machines.filter((machine) => machine.locked === 0).length, total: machines.length },
        role: node.role,
        started_on: node.started_on,
        timestamp: heartbeat,
        version: node.version,
      },
    ],
  ];
}

/**
 * Cuckoo's scheduler counts: all tasks, those of priority 1 and of priority 2 or more, and the same
 * for tasks submitted today (UTC). Deleted tasks have no row: only `all` can count them, from the ids
 * given out.
 */
function tasksTally(counts: readonly TaskCountRow[], issued: number): Record<(typeof GROUPS)[number], Tally> {
  const tally = Object.fromEntries(GROUPS.map((group) => [group, { pending: 0, processing: 0, finished: 0, deleted: 0 }])) as Record<(typeof GROUPS)[number], Tally>;
  let rows = 0;
  for (const count of counts) {
    rows += count.count;
    const state = count.status === 'pending' ? 'pending' : ENDED.includes(count.status) ? 'finished' : 'processing';
    const prio = count.priority <= 1 ? '1' : '2';
    const groups = ['all', `prio${prio}`, ...(count.today ? ['today', `today${prio}`] : [])] as Array<(typeof GROUPS)[number]>;
    for (const group of groups) tally[group][state] += count.count;
  }
  tally.all.deleted = Math.max(0, issued - rows);
  return tally;
}

function startOfToday(): string {
  const now = new Date();
  return new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate())).toISOString();
}
