import type { Kysely } from 'kysely';
import type { Database, NodeRow } from './schema.js';

/** A node as it is shown: every column but the remote node's token. */
export type ShownNode = Omit<NodeRow, 'token'>;

export interface MachineCount {
  available: number;
  total: number;
}

/**
 * What the status views show of the cluster (/cuckoo/status, `nestbox status`, the dashboard): the
 * nodes, their machines and their running tasks. Read only; the node registry writes the nodes.
 */
export class ClusterViewStore {
  constructor(private readonly db: Kysely<Database>) {}

  /** Every node, by name, without its token. */
  async nodes(): Promise<ShownNode[]> {
    return this.db
      .selectFrom('nodes')
      .select(['id', 'name', 'role', 'url', 'version', 'enabled', 'mode', 'machines', 'status', 'started_on', 'heartbeat_on', 'lease_expires_on'])
      .orderBy('name')
      .execute();
  }

  /** Enabled machines per node: how many, and how many are unlocked. */
  async machineCounts(): Promise<Map<string, MachineCount>> {
    const rows = await this.db
      .selectFrom('machines')
      .select((eb) => [
        'node',
        eb.fn.countAll<number | string>().as('total'),
        eb.fn.sum<number | string | null>(eb.case().when('locked', '=', 0).then(1).else(0).end()).as('available'),
      ])
      .where('enabled', '=', 1)
      .groupBy('node')
      .execute();
    return new Map(rows.map((row) => [row.node, { available: Number(row.available ?? 0), total: Number(row.total) }]));
  }

  /** Running tasks per node; null: tasks that name no node (run by a node from before the cluster). */
  async runningTasks(): Promise<Map<string | null, number>> {
    const rows = await this.db
      .selectFrom('tasks')
      .select((eb) => ['node', eb.fn.countAll<number | string>().as('count')])
      .where('status', '=', 'running')
      .groupBy('node')
      .execute();
    return new Map(rows.map((row) => [row.node, Number(row.count)]));
  }
}
