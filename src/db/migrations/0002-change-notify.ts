import { type Kysely, SqliteAdapter, sql } from 'kysely';

/**
 * PostgreSQL only: every statement that changes a table the API answers from sends a notification on
 * `nestbox_data_changed`, delivered after its transaction commits, to every node listening. The
 * response cache keys its entries on that (see db/change-listener.ts). SQLite has its own data_version.
 */
export const CHANGE_CHANNEL = 'nestbox_data_changed';
const TABLES = ['tasks', 'samples', 'machines', 'guests', 'errors', 'submissions'] as const;

export async function up(db: Kysely<unknown>): Promise<void> {
  if (db.getExecutor().adapter instanceof SqliteAdapter) return;
  await sql`CREATE FUNCTION nestbox_data_changed() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN PERFORM pg_notify(${sql.lit(CHANGE_CHANNEL)}, ''); RETURN NULL; END $$`.execute(db);
  for (const table of TABLES) {
    await sql`CREATE TRIGGER ${sql.id(`${table}_changed`)} AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON ${sql.table(table)}
      FOR EACH STATEMENT EXECUTE FUNCTION nestbox_data_changed()`.execute(db);
  }
}

export async function down(db: Kysely<unknown>): Promise<void> {
  if (db.getExecutor().adapter instanceof SqliteAdapter) return;
  for (const table of TABLES) await sql`DROP TRIGGER IF EXISTS ${sql.id(`${table}_changed`)} ON ${sql.table(table)}`.execute(db);
  await sql`DROP FUNCTION IF EXISTS nestbox_data_changed()`.execute(db);
}
