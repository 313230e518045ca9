import { type Kysely, SqliteAdapter, sql } from 'kysely';

/**
 * How nodes take work (db/task-claims.ts):
 *  - the queue's order as an index over pending tasks only, so that a claim reads the queue's head
 *    instead of sorting every pending task;
 *  - at most one note per task that it waits for a node that is down (errors with action 'waiting'), however
 *    many nodes notice it at once;
 *  - PostgreSQL only: a notification on `nestbox_task_pending` whenever a task becomes pending (submitted,
 *    requeued), delivered when its transaction commits, so that idle nodes claim it at once instead of at
 *    their next look at the queue (notifications with the same payload in one transaction are folded into
 *    one, so a batch of submissions wakes each node once);
 *  - PostgreSQL only: the claim as a PL/pgSQL function, `nestbox_claim_task`, whose plan PostgreSQL keeps
 *    per connection instead of planning the statement on every claim.
 */
/** Where idle nodes hear of pending tasks. */
export const TASK_PENDING_CHANNEL = 'nestbox_task_pending';

export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`CREATE INDEX tasks_pending_queue ON tasks (priority DESC, added_on, id) WHERE status = 'pending'`.execute(db);
  await sql`CREATE UNIQUE INDEX errors_waiting_once ON errors (task_id) WHERE action = 'waiting'`.execute(db);
  if (db.getExecutor().adapter instanceof SqliteAdapter) return;
  await sql`CREATE FUNCTION nestbox_task_pending() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN PERFORM pg_notify(${sql.lit(TASK_PENDING_CHANNEL)}, ''); RETURN NULL; END $$`.execute(db);
  await sql`CREATE TRIGGER tasks_pending AFTER INSERT OR UPDATE OF status ON tasks
    FOR EACH ROW WHEN (NEW.status = 'pending') EXECUTE FUNCTION nestbox_task_pending()`.execute(db);
  await sql.raw(CLAIM_FUNCTION).execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`DROP INDEX IF EXISTS tasks_pending_queue`.execute(db);
  await sql`DROP INDEX IF EXISTS errors_waiting_once`.execute(db);
  if (db.getExecutor().adapter instanceof SqliteAdapter) return;
  await sql`DROP FUNCTION IF EXISTS nestbox_claim_task(text, boolean, text[], text[], integer[], text)`.execute(db);
  await sql`DROP TRIGGER IF EXISTS tasks_pending ON tasks`.execute(db);
  await sql`DROP FUNCTION IF EXISTS nestbox_task_pending()`.execute(db);
}

/**
 * Locks the claimer's free machines (its own, or also those of no node when `unassigned`; of the kinds it
 * runs; not the `busy` ones), takes the highest-priority then oldest pending task, unassigned or given to
 * the claimer, that one of them fits, with FOR UPDATE SKIP LOCKED; marks the task running on the claimer,
 * locks the machine and records the guest (its manager: `managers`, in the order of `kinds`). The fit is
 * the scheduler's machineFits() (scheduler/matching.ts): the task names the machine, or names none and asks
 * for no platform or the machine's, and only for tags the machine has. No row when nothing fits.
 */
export const CLAIM_FUNCTION = `
CREATE FUNCTION nestbox_claim_task(claimer text, unassigned boolean, kinds text[], managers text[], busy integer[], now text)
RETURNS TABLE (task json, machine json, guest_id integer) LANGUAGE plpgsql AS $$
#variable_conflict use_column
BEGIN
  RETURN QUERY
  with free as (
    select machines.* from machines
    where enabled = 1 and locked = 0 and (node = claimer or (unassigned and node = ''))
      and kind = any(kinds) and not (id = any(busy))
    for update skip locked
  ),
  picked as (
    select t.id as task_id, fit.id as machine_id, to_json(fit) as machine,
      managers[array_position(kinds, fit.kind::text)] as manager
    from tasks t
    cross join lateral (
      select * from free f
      where t.machine = f.name
         or (t.machine = '' and (t.platform = '' or t.platform = f.platform)
             and (t.tags = '[]' or t.tags::jsonb <@ f.tags::jsonb))
      order by f.id limit 1
    ) fit
    where t.status = 'pending' and (t.node is null or t.node = claimer)
    order by t.priority desc, t.added_on, t.id
    limit 1
    for update of t skip locked
  ),
  locked as (
    update machines set locked = 1, locked_changed_on = now where id = (select machine_id from picked)
  ),
  running as (
    update tasks set status = 'running', node = claimer, started_on = now
    where id = (select task_id from picked) returning tasks.*
  ),
  guest as (
    insert into guests (task_id, name, label, manager, status, started_on)
    select task_id, machine->>'name', machine->>'label', manager, 'init', now from picked
    returning id
  )
  select to_json(running), picked.machine, guest.id from running, picked, guest;
END
$$`;
