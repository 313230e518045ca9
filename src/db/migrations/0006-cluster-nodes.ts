import { type ColumnDefinitionBuilder, type Kysely, SqliteAdapter } from 'kysely';

/**
 * The cluster: every node sharing the database registers itself in `nodes` and heartbeats there; a
 * node's lease (`lease_expires_on`) covers every task it runs. Nodes added through Cuckoo's distributed
 * API (`POST /api/node`: plain Cuckoo or nestbox servers driven over REST) are rows of role `remote`.
 * Machines and tasks name the node that owns or runs them.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  const sqlite = db.getExecutor().adapter instanceof SqliteAdapter;
  const id = (col: ColumnDefinitionBuilder) =>
    sqlite ? col.primaryKey().autoIncrement() : col.primaryKey().generatedByDefaultAsIdentity();
  await db.schema
    .createTable('nodes')
    .addColumn('id', 'integer', id)
    .addColumn('name', 'varchar(255)', (col) => col.notNull().unique())
    .addColumn('role', 'varchar(16)', (col) => col.notNull())
    .addColumn('url', 'text', (col) => col.notNull().defaultTo(''))
    .addColumn('token', 'text')
    .addColumn('version', 'varchar(64)', (col) => col.notNull().defaultTo(''))
    .addColumn('enabled', 'integer', (col) => col.notNull().defaultTo(1))
    .addColumn('mode', 'varchar(32)', (col) => col.notNull().defaultTo('normal'))
    .addColumn('machines', 'text', (col) => col.notNull().defaultTo('[]'))
    .addColumn('status', 'text')
    .addColumn('started_on', 'varchar(32)')
    .addColumn('heartbeat_on', 'varchar(32)')
    .addColumn('lease_expires_on', 'varchar(32)')
    .execute();
  await db.schema.alterTable('machines').addColumn('node', 'varchar(255)', (col) => col.notNull().defaultTo('')).execute();
  await db.schema.alterTable('tasks').addColumn('node', 'varchar(255)').execute();
  await db.schema.alterTable('tasks').addColumn('node_task_id', 'integer').execute();
  await db.schema.alterTable('tasks').addColumn('delegated_on', 'varchar(32)').execute();
  await db.schema.createIndex('tasks_node_status').on('tasks').columns(['node', 'status']).execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropIndex('tasks_node_status').execute();
  for (const column of ['delegated_on', 'node_task_id', 'node']) await db.schema.alterTable('tasks').dropColumn(column).execute();
  await db.schema.alterTable('machines').dropColumn('node').execute();
  await db.schema.dropTable('nodes').execute();
}
