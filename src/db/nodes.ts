import type { Kysely } from 'kysely';
import { type ExpiredLease, recoverExpiredLeases } from './lease-recovery.js';
import type { Database, NodeRole, NodeRow } from './schema.js';

export interface NodeRegistration {
  name: string;
  role: Exclude<NodeRole, 'remote'>;
  url: string;
  version: string;
}

/** The nodes of the cluster, their heartbeats and leases. */
export class NodeStore {
  constructor(private readonly db: Kysely<Database>) {}

  /** Creates or updates this node's row, started now and holding a lease until `leaseUntil`. */
  async register(node: NodeRegistration, now: string, leaseUntil: string): Promise<void> {
    const values = { ...node, enabled: 1, started_on: now, heartbeat_on: now, lease_expires_on: leaseUntil };
    await this.db
      .insertInto('nodes')
      .values(values)
      .onConflict((oc) => oc.column('name').doUpdateSet(values))
      .execute();
  }

  async setUrl(name: string, url: string): Promise<void> {
    await this.db.updateTable('nodes').set({ url }).where('name', '=', name).execute();
  }

  /** Renews the lease; false when the row is gone (it is then registered again). */
  async heartbeat(name: string, now: string, leaseUntil: string): Promise<boolean> {
    const result = await this.db
      .updateTable('nodes')
      .set({ heartbeat_on: now, lease_expires_on: leaseUntil })
      .where('name', '=', name)
      .executeTakeFirst();
    return result.numUpdatedRows > 0n;
  }

  async get(name: string): Promise<NodeRow | undefined> {
    return this.db.selectFrom('nodes').selectAll().where('name', '=', name).executeTakeFirst();
  }

  /** Every node's lease end by name (null: never had one). */
  async leases(): Promise<Map<string, string | null>> {
    const rows = await this.db.selectFrom('nodes').select(['name', 'lease_expires_on']).execute();
    return new Map(rows.map((row) => [row.name, row.lease_expires_on]));
  }

  /**
   * PostgreSQL only: requeues the running tasks of nodes whose lease ended before `now`, and frees their
   * machines (lease-recovery.ts).
   */
  async recoverExpired(self: string, now: string): Promise<ExpiredLease[]> {
    return recoverExpiredLeases(this.db, self, now);
  }
}
