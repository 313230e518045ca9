import { type Kysely, SqliteAdapter, sql } from 'kysely';

/**
 * The search index (db/search.ts): per indexed task a `search_tasks` row, per searchable value of its
 * report a `search_entries` row. Both go with their task (ON DELETE CASCADE), and replacing a task's
 * row replaces its entries. `norm` gets a B-tree for exact and prefix matches (byte order in
 * PostgreSQL, so that a range over it is a prefix); `terms` a full-text index: an FTS5 table kept by
 * triggers in SQLite, a generated tsvector with a GIN index in PostgreSQL.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  const sqlite = db.getExecutor().adapter instanceof SqliteAdapter;
  await db.schema
    .createTable('search_tasks')
    .addColumn('task_id', 'integer', (col) => col.primaryKey().references('tasks.id').onDelete('cascade'))
    .addColumn('target', 'text', (col) => col.notNull())
    .addColumn('score', 'double precision', (col) => col.notNull())
    .addColumn('indexed_on', 'varchar(32)', (col) => col.notNull())
    .execute();
  await db.schema
    .createTable('search_entries')
    .addColumn('id', sqlite ? 'integer' : 'bigint', (col) =>
      sqlite ? col.primaryKey().autoIncrement() : col.primaryKey().generatedByDefaultAsIdentity(),
    )
    .addColumn('task_id', 'integer', (col) => col.notNull().references('search_tasks.task_id').onDelete('cascade'))
    .addColumn('field', 'varchar(16)', (col) => col.notNull())
    .addColumn('value', 'text', (col) => col.notNull())
    .addColumn('norm', sqlite ? sql`text` : sql`text COLLATE "C"`, (col) => col.notNull())
    .addColumn('terms', 'text', (col) => col.notNull())
    .execute();
  await db.schema.createIndex('search_entries_task').on('search_entries').column('task_id').execute();
  await db.schema.createIndex('search_entries_norm').on('search_entries').column('norm').execute();
  if (sqlite) await fullTextSqlite(db);
  else await fullTextPostgres(db);
}

async function fullTextSqlite(db: Kysely<unknown>): Promise<void> {
  // Words are split by db/search-text.ts already; unicode61 splits the same way and folds nothing more.
  await sql`CREATE VIRTUAL TABLE search_terms USING fts5(terms, content='search_entries', content_rowid='id',
    tokenize='unicode61 remove_diacritics 0', prefix='3')`.execute(db);
  await sql`CREATE TRIGGER search_entries_added AFTER INSERT ON search_entries BEGIN
    INSERT INTO search_terms(rowid, terms) VALUES (new.id, new.terms); END`.execute(db);
  await sql`CREATE TRIGGER search_entries_removed AFTER DELETE ON search_entries BEGIN
    INSERT INTO search_terms(search_terms, rowid, terms) VALUES ('delete', old.id, old.terms); END`.execute(db);
}

async function fullTextPostgres(db: Kysely<unknown>): Promise<void> {
  await sql`ALTER TABLE search_entries ADD COLUMN terms_vector tsvector
    GENERATED ALWAYS AS (to_tsvector('simple'::regconfig, terms)) STORED`.execute(db);
  await sql`CREATE INDEX search_entries_terms ON search_entries USING gin (terms_vector)`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`DROP TABLE IF EXISTS search_terms`.execute(db);
  await db.schema.dropTable('search_entries').execute();
  await db.schema.dropTable('search_tasks').execute();
}
