import type { AppContext } from '../app.js';
import { nodeName } from '../cluster/node-identity.js';
import type { Config } from '../config/schema.js';
import type { MachineCount, ShownNode } from '../db/cluster-view.js';
import type { NodeStatus } from './node-status.js';
import { formatCuckooDate } from '../util/time.js';

export interface ClusterStatus {
  nodes: NodeStatus[];
  /** The machines of the live nodes (remote ones included), as /cuckoo/status counts them. */
  machines: MachineCount;
}

/** This node's name (cluster.node_name, else the host's name). */
export function thisNodeName(config: Config): string {
  return nodeName(config);
}

/**
 * The nodes of the database with their machines and running tasks. Machines of '' and tasks that
 * name no node (rows from before the cluster) are this node's when it is a node of role `all`, as the
 * scheduler counts them; this node is listed even before it has registered, since it is the one answering.
 */
export async function clusterStatus(ctx: AppContext, now = Date.now()): Promise<ClusterStatus> {
  const [rows, machineCounts, running] = await Promise.all([
    ctx.stores.clusterView.nodes(),
    ctx.stores.clusterView.machineCounts(),
    ctx.stores.clusterView.runningTasks(),
  ]);
  const self = thisNodeName(ctx.config);
  const holdsUnassigned = (name: string) => name === self && ctx.config.cluster.role === 'all';
  const machinesOf = (name: string) => sumCounts((holdsUnassigned(name) ? [name, ''] : [name]).map((node) => machineCounts.get(node)));
  const runningOf = (name: string) => (running.get(name) ?? 0) + (holdsUnassigned(name) ? (running.get(null) ?? 0) : 0);
  const registered = rows.map((row) =>
    row.role === 'remote' ? remoteNodeStatus(row, now, machineCounts.get(row.name)) : nodeStatus(row, now, machinesOf(row.name), runningOf(row.name)),
  );
  const nodes = rows.some((row) => row.name === self)
    ? registered
    : [...registered, unregisteredSelf(ctx.config, self, machinesOf(self), runningOf(self))].sort((a, b) => a.name.localeCompare(b.name));
  return { nodes, machines: sumCounts(nodes.filter((node) => node.live).map((node) => node.machines)) };
}

function nodeStatus(row: ShownNode, now: number, machines: MachineCount, running: number): NodeStatus {
  const lease = row.lease_expires_on === null ? Number.NaN : Date.parse(row.lease_expires_on);
  return {
    ...common(row, now),
    live: row.enabled === 1 && lease > now,
    machines,
    tasks: { running },
  };
}

/**
 * A remote Cuckoo or nestbox server: its machines as kept in `machines` when they are, else as last
 * read from it, and its load from its last /cuckoo/status. It is live while enabled (it has no lease).
 */
function remoteNodeStatus(row: ShownNode, now: number, kept: MachineCount | undefined): NodeStatus {
  const listed = parseJson(row.machines);
  const status = parseJson(row.status) as { machines?: { available?: unknown }; tasks?: { running?: unknown } } | undefined;
  const total = Array.isArray(listed) ? listed.length : 0;
  const available = status?.machines?.available;
  const running = status?.tasks?.running;
  return {
    ...common(row, now),
    live: row.enabled === 1,
    machines: kept ?? { available: typeof available === 'number' ? Math.min(available, total) : total, total },
    tasks: { running: typeof running === 'number' ? running : 0 },
  };
}

function common(row: ShownNode, now: number) {
  return {
    name: row.name,
    role: row.role,
    enabled: row.enabled === 1,
    heartbeat_on: formatCuckooDate(row.heartbeat_on),
    heartbeat_age: row.heartbeat_on === null ? null : Math.max(0, Math.floor((now - Date.parse(row.heartbeat_on)) / 1000)),
  };
}

function unregisteredSelf(config: Config, name: string, machines: MachineCount, running: number): NodeStatus {
  return { name, role: config.cluster.role, enabled: true, live: true, heartbeat_on: null, heartbeat_age: null, machines, tasks: { running } };
}

function sumCounts(counts: Array<MachineCount | undefined>): MachineCount {
  return counts.reduce<MachineCount>((sum, count) => ({ available: sum.available + (count?.available ?? 0), total: sum.total + (count?.total ?? 0) }), {
    available: 0,
    total: 0,
  });
}

function parseJson(text: string | null): unknown {
  try {
    return text === null ? undefined : JSON.parse(text);
  } catch {
    return undefined;
  }
}
