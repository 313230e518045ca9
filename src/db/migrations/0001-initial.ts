import { type ColumnDefinitionBuilder, type Kysely, SqliteAdapter, sql } from 'kysely';

/** Tasks, samples, machines, guests, errors and submissions. Written for both SQLite and PostgreSQL. */
export async function up(db: Kysely<unknown>): Promise<void> {
  const sqlite = db.getExecutor().adapter instanceof SqliteAdapter;
  // Ids are never reused: storage/analyses/<id> of a deleted task must not be taken by a new one.
  const id = (col: ColumnDefinitionBuilder) =>
    sqlite ? col.primaryKey().autoIncrement() : col.primaryKey().generatedByDefaultAsIdentity();
  await db.schema
    .createTable('samples')
    .addColumn('id', 'integer', id)
    .addColumn('file_size', 'bigint', (col) => col.notNull())
    .addColumn('file_type', 'text', (col) => col.notNull())
    .addColumn('md5', 'varchar(32)', (col) => col.notNull())
    .addColumn('crc32', 'varchar(8)', (col) => col.notNull())
    .addColumn('sha1', 'varchar(40)', (col) => col.notNull())
    .addColumn('sha256', 'varchar(64)', (col) => col.notNull().unique())
    .addColumn('sha512', 'varchar(128)', (col) => col.notNull())
    .addColumn('ssdeep', 'text')
    .execute();
  await db.schema.createIndex('samples_md5').on('samples').column('md5').execute();

  await db.schema
    .createTable('submissions')
    .addColumn('id', 'integer', id)
    .addColumn('tmp_path', 'text')
    .addColumn('added_on', 'varchar(32)', (col) => col.notNull())
    .execute();

  await db.schema
    .createTable('tasks')
    .addColumn('id', 'integer', id)
    .addColumn('target', 'text', (col) => col.notNull())
    .addColumn('category', 'varchar(16)', (col) => col.notNull())
    .addColumn('timeout', 'integer', (col) => col.notNull().defaultTo(0))
    .addColumn('priority', 'integer', (col) => col.notNull().defaultTo(1))
    .addColumn('custom', 'text', (col) => col.notNull().defaultTo(''))
    .addColumn('owner', 'varchar(64)', (col) => col.notNull().defaultTo(''))
    .addColumn('machine', 'varchar(255)', (col) => col.notNull().defaultTo(''))
    .addColumn('package', 'varchar(255)', (col) => col.notNull().defaultTo(''))
    .addColumn('platform', 'varchar(255)', (col) => col.notNull().defaultTo(''))
    .addColumn('tags', 'text', (col) => col.notNull().defaultTo('[]'))
    .addColumn('options', 'text', (col) => col.notNull().defaultTo(''))
    .addColumn('memory', 'integer', (col) => col.notNull().defaultTo(0))
    .addColumn('enforce_timeout', 'integer', (col) => col.notNull().defaultTo(0))
    .addColumn('clock', 'varchar(32)', (col) => col.notNull())
    .addColumn('added_on', 'varchar(32)', (col) => col.notNull())
    .addColumn('started_on', 'varchar(32)')
    .addColumn('completed_on', 'varchar(32)')
    .addColumn('status', 'varchar(32)', (col) => col.notNull().defaultTo('pending'))
    .addColumn('sample_id', 'integer', (col) => col.references('samples.id'))
    .addColumn('submit_id', 'integer', (col) => col.references('submissions.id'))
    .addColumn('processing', 'varchar(255)')
    .addColumn('route', 'varchar(64)')
    .addColumn('reboot_of', 'integer')
    .addCheckConstraint(
      'tasks_status_valid',
      sql`status in ('pending','running','completed','reported','recovered','failed_analysis','failed_processing','failed_reporting')`,
    )
    .execute();
  await db.schema.createIndex('tasks_queue').on('tasks').columns(['status', 'priority', 'added_on']).execute();
  await db.schema.createIndex('tasks_sample').on('tasks').column('sample_id').execute();

  await db.schema
    .createTable('machines')
    .addColumn('id', 'integer', id)
    .addColumn('name', 'varchar(255)', (col) => col.notNull().unique())
    .addColumn('label', 'varchar(255)', (col) => col.notNull())
    .addColumn('kind', 'varchar(32)', (col) => col.notNull())
    .addColumn('ip', 'varchar(64)', (col) => col.notNull())
    .addColumn('platform', 'varchar(64)', (col) => col.notNull())
    .addColumn('tags', 'text', (col) => col.notNull().defaultTo('[]'))
    .addColumn('options', 'text', (col) => col.notNull().defaultTo('[]'))
    .addColumn('interface', 'varchar(255)')
    .addColumn('snapshot', 'varchar(255)')
    .addColumn('locked', 'integer', (col) => col.notNull().defaultTo(0))
    .addColumn('locked_changed_on', 'varchar(32)')
    .addColumn('status', 'varchar(64)')
    .addColumn('status_changed_on', 'varchar(32)')
    .addColumn('resultserver_ip', 'varchar(64)', (col) => col.notNull())
    .addColumn('resultserver_port', 'integer', (col) => col.notNull())
    .addColumn('enabled', 'integer', (col) => col.notNull().defaultTo(1))
    .execute();

  await db.schema
    .createTable('guests')
    .addColumn('id', 'integer', id)
    .addColumn('task_id', 'integer', (col) => col.notNull().references('tasks.id').onDelete('cascade'))
    .addColumn('name', 'varchar(255)', (col) => col.notNull())
    .addColumn('label', 'varchar(255)', (col) => col.notNull())
    .addColumn('manager', 'varchar(255)', (col) => col.notNull())
    .addColumn('status', 'varchar(16)', (col) => col.notNull())
    .addColumn('started_on', 'varchar(32)', (col) => col.notNull())
    .addColumn('shutdown_on', 'varchar(32)')
    .execute();
  await db.schema.createIndex('guests_task').on('guests').column('task_id').execute();

  await db.schema
    .createTable('errors')
    .addColumn('id', 'integer', id)
    .addColumn('task_id', 'integer', (col) => col.notNull().references('tasks.id').onDelete('cascade'))
    .addColumn('message', 'text', (col) => col.notNull())
    .addColumn('action', 'varchar(64)', (col) => col.notNull().defaultTo(''))
    .addColumn('added_on', 'varchar(32)', (col) => col.notNull())
    .execute();
  await db.schema.createIndex('errors_task').on('errors').column('task_id').execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  for (const table of ['errors', 'guests', 'machines', 'tasks', 'submissions', 'samples']) {
    await db.schema.dropTable(table).execute();
  }
}
