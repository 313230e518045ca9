import { type Kysely, SqliteAdapter, sql } from 'kysely';

/**
 * The queue's order as an index over pending tasks only, so that a claim reads the queue's head instead
 * of sorting every pending task. PostgreSQL only: a notification on `nestbox_task_pending` whenever a task becomes pending (submitted,
 * requeued), delivered when its transaction commits, so that idle nodes claim it at once instead of at
 * their next look at the queue. Notifications with the same payload in one transaction are folded
 * into one, so a batch of submissions wakes each node once.
 */
/** Where idle nodes hear of pending tasks. */
export const TASK_PENDING_CHANNEL = 'nestbox_task_pending';

export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`CREATE INDEX tasks_pending_queue ON tasks (priority DESC, added_on, id) WHERE status = 'pending'`.execute(db);
  if (db.getExecutor().adapter instanceof SqliteAdapter) return;
  await sql`CREATE FUNCTION nestbox_task_pending() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN PERFORM pg_notify(${sql.lit(TASK_PENDING_CHANNEL)}, ''); RETURN NULL; END $$`.execute(db);
  await sql`CREATE TRIGGER tasks_pending AFTER INSERT OR UPDATE OF status ON tasks
    FOR EACH ROW WHEN (NEW.status = 'pending') EXECUTE FUNCTION nestbox_task_pending()`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`DROP INDEX IF EXISTS tasks_pending_queue`.execute(db);
  if (db.getExecutor().adapter instanceof SqliteAdapter) return;
  await sql`DROP TRIGGER IF EXISTS tasks_pending ON tasks`.execute(db);
  await sql`DROP FUNCTION IF EXISTS nestbox_task_pending()`.execute(db);
}
