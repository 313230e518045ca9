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
 * PostgreSQL only. One statement, so one round trip and its own transaction: locks this node's free
 * machines, takes the highest-priority (then oldest) pending task that one of them fits with FOR UPDATE
 * SKIP LOCKED, marks it running on this node, locks the machine and records the guest. Claimers on other
 * connections skip the rows locked here, so nothing is claimed twice and nobody waits. The fit is the
 * scheduler's machineFits() (scheduler/matching.ts) in SQL: the task names the machine, or names none and
 * asks for no platform or the machine's, and for tags all of which the machine has. Undefined when there
 * is nothing to claim.
 */
export async function claimNextTask(db: Kysely<Database>, request: ClaimRequest): Promise<Claim | undefined> {
  if (request.managers.size === 0) return undefined;
  const now = nowIso();
  const managers = sql.join([...request.managers].map(([kind, manager]) => sql`(${kind}, ${manager})`));
  const ownMachine = request.unassignedMachines ? sql`(node = ${request.node} or node = '')` : sql`node = ${request.node}`;
  const notBusy = request.busyMachineIds.length > 0 ? sql`and id not in (${sql.join([...request.busyMachineIds])})` : sql``;
  const result = await sql<TaskRow & { claimed_machine: MachineRow; guest_id: number }>`
    with managers (kind, manager) as (values ${managers}),
    free as (
      select machines.* from machines
      where enabled = 1 and locked = 0 and ${ownMachine} and kind in (select kind from managers) ${notBusy}
      for update skip locked
    ),
    picked as (
      select t.id as task_id, fit.id as machine_id, to_json(fit) as machine, managers.manager
      from tasks t
      cross join lateral (
        select * from free f
        where t.machine = f.name
           or (t.machine = '' and (t.platform = '' or t.platform = f.platform)
               and (t.tags = '[]' or t.tags::jsonb <@ f.tags::jsonb))
        order by f.id limit 1
      ) fit
      join managers on managers.kind = fit.kind
      where t.status = 'pending' and (t.node is null or t.node = ${request.node})
      order by t.priority desc, t.added_on, t.id
      limit 1
      for update of t skip locked
    ),
    locked as (
      update machines set locked = 1, locked_changed_on = ${now} where id = (select machine_id from picked)
    ),
    running as (
      update tasks set status = 'running', node = ${request.node}, started_on = ${now}
      where id = (select task_id from picked) returning tasks.*
    ),
    guest as (
      insert into guests (task_id, name, label, manager, status, started_on)
      select task_id, machine->>'name', machine->>'label', manager, 'init', ${now} from picked
      returning id
    )
    select running.*, picked.machine as claimed_machine, guest.id as guest_id from running, picked, guest`.execute(db);
  const row = result.rows[0];
  if (!row) return undefined;
  const { claimed_machine: machine, guest_id: guestId, ...task } = row;
  return { task, machine: { ...machine, locked: 1, locked_changed_on: now }, guestId };
}
