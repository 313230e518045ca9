import { type Kysely, sql } from 'kysely';
import { nowIso } from '../util/time.js';
import type { Database, MachineRow, TaskRow } from './schema.js';

export interface ClaimRequest {
  /** The claiming node: only its machines are used, and the task is marked as its. */
  node: string;
  /** Also use machines from before the cluster (machines.node ''). */
  unassignedMachines: boolean;
  /** Machines this node is still busy with, whatever the table says. */
  busyMachineIds: readonly number[];
  /** The machine kinds this node can run, each with its guest manager's name. */
  managers: ReadonlyMap<string, string>;
}

export interface Claim {
  task: TaskRow;
  machine: MachineRow;
  guestId: number;
}

/**
 * PostgreSQL only. Claims the highest-priority (then oldest) pending task that one of this node's free
 * machines fits, with FOR UPDATE SKIP LOCKED, in one statement: its own transaction and one round trip
 * (the function nestbox_claim_task, migrations 0007 and 0008). Claimers on other connections skip the rows locked
 * here, so nothing is claimed twice and nobody waits. Undefined when there is nothing to claim.
 */
export async function claimNextTask(db: Kysely<Database>, request: ClaimRequest): Promise<Claim | undefined> {
  if (request.managers.size === 0) return undefined;
  const now = nowIso();
  const kinds = [...request.managers.keys()];
  const managers = kinds.map((kind) => request.managers.get(kind)!);
  const result = await sql<{ task: TaskRow; machine: MachineRow; guest_id: number }>`
    select * from nestbox_claim_task(${request.node}, ${request.unassignedMachines}, ${kinds}::text[], ${managers}::text[],
      ${[...request.busyMachineIds]}::integer[], ${now})`.execute(db);
  const row = result.rows[0];
  if (!row) return undefined;
  return { task: row.task, machine: { ...row.machine, locked: 1, locked_changed_on: now }, guestId: row.guest_id };
}
