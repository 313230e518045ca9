// No imports: the web interface's bundle reads this file too (web/src/dashboard/node-table.tsx).

/** One node as /cuckoo/status (`nodes`), `nestbox status` and the dashboard show it. */
export interface NodeStatus {
  name: string;
  role: string;
  enabled: boolean;
  /** Holds a lease (a remote node: is enabled); only live nodes' machines count as the cluster's. */
  live: boolean;
  /** `YYYY-MM-DD HH:MM:SS` (UTC), or null before the first heartbeat. */
  heartbeat_on: string | null;
  /** Whole seconds since the last heartbeat; null before the first. */
  heartbeat_age: number | null;
  machines: { available: number; total: number };
  tasks: { running: number };
}

/** What a node's state is called where it is shown. */
export function nodeState(node: NodeStatus): 'disabled' | 'live' | 'down' {
  if (!node.enabled) return 'disabled';
  return node.live ? 'live' : 'down';
}

/** Seconds as the largest whole unit that fits: 42s, 3m, 5h, 2d. */
export function formatAge(seconds: number): string {
  if (seconds < 120) return `${seconds}s`;
  if (seconds < 7200) return `${Math.floor(seconds / 60)}m`;
  if (seconds < 172_800) return `${Math.floor(seconds / 3600)}h`;
  return `${Math.floor(seconds / 86_400)}d`;
}
