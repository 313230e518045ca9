import { type ExpressionBuilder, type Kysely, sql, type Transaction } from 'kysely';
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
  /** Whether a task may run on a machine (the scheduler's matching; the SQL below narrows the same way). */
  fits: (machine: MachineRow, task: TaskRow) => boolean;
}

export interface Claim {
  task: TaskRow;
  machine: MachineRow;
  guestId: number;
}

/**
 * PostgreSQL only. In one transaction: locks this node's free machines, takes the highest-priority (then
 * oldest) pending task one of them fits with FOR UPDATE SKIP LOCKED, marks it running on this node,
 * locks the machine and records the guest. Claimers on other connections skip the rows locked here, so
 * nothing is claimed twice and nobody waits. Undefined when there is nothing to claim.
 */
export async function claimNextTask(db: Kysely<Database>, request: ClaimRequest): Promise<Claim | undefined> {
  if (request.managers.size === 0) return undefined;
  return db.transaction().execute(async (trx) => {
    const machines = await lockFreeMachines(trx, request);
    if (machines.length === 0) return undefined;
    const task = await lockFirstFitting(trx, machines, request.node);
    if (!task) return undefined;
    const machine = machines.find((candidate) => request.fits(candidate, task));
    if (!machine) return undefined;
    const now = nowIso();
    await trx.updateTable('machines').set({ locked: 1, locked_changed_on: now }).where('id', '=', machine.id).execute();
    await trx.updateTable('tasks').set({ status: 'running', node: request.node, started_on: now }).where('id', '=', task.id).execute();
    const guest = await trx
      .insertInto('guests')
      .values({ task_id: task.id, name: machine.name, label: machine.label, manager: request.managers.get(machine.kind)!, status: 'init', started_on: now })
      .returning('id')
      .executeTakeFirstOrThrow();
    return { task: { ...task, status: 'running', node: request.node, started_on: now }, machine, guestId: guest.id };
  });
}

function lockFreeMachines(trx: Transaction<Database>, request: ClaimRequest): Promise<MachineRow[]> {
  let query = trx
    .selectFrom('machines')
    .selectAll()
    .where('enabled', '=', 1)
    .where('locked', '=', 0)
    .where('kind', 'in', [...request.managers.keys()])
    .where((eb) => (request.unassignedMachines ? eb.or([eb('node', '=', request.node), eb('node', '=', '')]) : eb('node', '=', request.node)));
  if (request.busyMachineIds.length > 0) query = query.where('id', 'not in', request.busyMachineIds);
  return query.orderBy('id').forUpdate().skipLocked().execute();
}

/** machineFits() as SQL: a named machine, or the platform (when given) and every tag (tasks.tags ⊆ machine's). */
function fitsOneOf(machines: readonly MachineRow[]) {
  const kinds = new Map(machines.map((machine) => [`${machine.platform}\n${machine.tags}`, machine]));
  return (eb: ExpressionBuilder<Database, 'tasks'>) =>
    eb.or([
      eb('machine', 'in', machines.map((machine) => machine.name)),
      eb.and([
        eb('machine', '=', ''),
        eb.or(
          [...kinds.values()].map((machine) =>
            eb.and([
              eb.or([eb('platform', '=', ''), eb('platform', '=', machine.platform)]),
              sql<boolean>`${sql.ref('tags')}::jsonb <@ ${machine.tags}::jsonb`,
            ]),
          ),
        ),
      ]),
    ]);
}

function lockFirstFitting(trx: Transaction<Database>, machines: readonly MachineRow[], node: string): Promise<TaskRow | undefined> {
  return trx
    .selectFrom('tasks')
    .selectAll()
    .where('status', '=', 'pending')
    .where((eb) => eb.or([eb('node', 'is', null), eb('node', '=', node)]))
    .where(fitsOneOf(machines))
    .orderBy('priority', 'desc')
    .orderBy('added_on')
    .orderBy('id')
    .limit(1)
    .forUpdate()
    .skipLocked()
    .executeTakeFirst();
}
