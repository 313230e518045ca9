import type { Kysely, Transaction } from 'kysely';
import type { Database } from './schema.js';

/** A node whose lease ran out, with the work that was requeued or freed from it. */
export interface ExpiredLease {
  node: string;
  leaseExpiredOn: string;
  taskIds: number[];
  machineIds: number[];
}

/**
 * PostgreSQL only. In one transaction, for every other node whose lease has run out while it still
 * holds work: its running tasks go back to the queue (status pending, no node, an entry in `errors`
 * with action 'recovered'), its machines are unlocked and their guests stopped. Several nodes may do
 * this at once: the node row is locked (others skip it), and a task is requeued only while it is
 * still running under that node, so each task is requeued once.
 */
export async function recoverExpiredLeases(db: Kysely<Database>, self: string, now: string): Promise<ExpiredLease[]> {
  return db.transaction().execute(async (trx) => {
    const expired = await lockExpired(trx, self, now);
    const recovered: ExpiredLease[] = [];
    for (const node of expired) recovered.push(await recoverNode(trx, node.name, node.lease_expires_on, now));
    return recovered;
  });
}

async function recoverNode(trx: Transaction<Database>, node: string, leaseExpiredOn: string, now: string): Promise<ExpiredLease> {
  const tasks = await trx
    .updateTable('tasks')
    .set({ status: 'pending', node: null, started_on: null })
    .where('status', '=', 'running')
    .where('node', '=', node)
    .returning('id')
    .execute();
  const taskIds = tasks.map((task) => task.id);
  const message = `The lease of node ${node} expired on ${leaseExpiredOn} (the node stopped answering); its analysis was queued again`;
  if (taskIds.length > 0) {
    await trx.insertInto('errors').values(taskIds.map((id) => ({ task_id: id, message, action: 'recovered', added_on: now }))).execute();
  }
  const machines = await trx
    .updateTable('machines')
    .set({ locked: 0, locked_changed_on: now })
    .where('node', '=', node)
    .where('locked', '=', 1)
    .returning(['id', 'name'])
    .execute();
  const machineNames = (await trx.selectFrom('machines').select('name').where('node', '=', node).execute()).map((m) => m.name);
  if (machineNames.length > 0) {
    await trx
      .updateTable('guests')
      .set({ status: 'stopped', shutdown_on: now })
      .where('name', 'in', machineNames)
      .where('status', '!=', 'stopped')
      .execute();
  }
  return { node, leaseExpiredOn, taskIds, machineIds: machines.map((m) => m.id) };
}

/**
 * Nodes other than `self` whose lease ended before `now` and that still hold running tasks or locked
 * machines, each locked for this transaction; nodes another caller is recovering are skipped.
 */
async function lockExpired(trx: Transaction<Database>, self: string, now: string): Promise<Array<{ name: string; lease_expires_on: string }>> {
  const rows = await trx
    .selectFrom('nodes')
    .select(['name', 'lease_expires_on'])
    .where('name', '!=', self)
    .where('role', '!=', 'remote')
    .where('lease_expires_on', '<', now)
    .where((eb) =>
      eb.or([
        eb.exists(eb.selectFrom('tasks').select('id').whereRef('tasks.node', '=', 'nodes.name').where('tasks.status', '=', 'running')),
        eb.exists(eb.selectFrom('machines').select('id').whereRef('machines.node', '=', 'nodes.name').where('machines.locked', '=', 1)),
      ]),
    )
    .forUpdate()
    .skipLocked()
    .execute();
  return rows.map((row) => ({ name: row.name, lease_expires_on: row.lease_expires_on ?? '' }));
}
