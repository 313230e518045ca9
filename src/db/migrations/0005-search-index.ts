import { type Kysely, SqliteAdapter, sql } from 'kysely';

/**
 * The search index (db/search.ts). Per indexed task a `search_tasks` row; per searchable value of its
 * report a `search_entries` row, whose `norm` (db/search-text.ts) has a B-tree for exact and prefix
 * matches (byte order in PostgreSQL, so that a range over it is a prefix; task and field included so
 * that the range needs no table reads); and per task and field a `search_words` row, the words of all
 * the field's values, in a full-text index: an FTS5 table kept by triggers in SQLite, a generated
 * tsvector with a GIN index in PostgreSQL. A `search_words` id is task_id * 32 + the field's position
 * in SEARCH_FIELDS, so a word match names its task and field without reading the table.
 * Everything goes with its task (ON DELETE CASCADE); replacing a `search_tasks` row replaces the rest.
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
    .execute();
  await db.schema.createIndex('search_entries_task').on('search_entries').column('task_id').execute();
  await db.schema.createIndex('search_entries_norm').on('search_entries').columns(['norm', 'field', 'task_id']).execute();
  await db.schema
    .createTable('search_words')
    .addColumn('id', sqlite ? 'integer' : 'bigint', (col) => col.primaryKey())
    .addColumn('task_id', 'integer', (col) => col.notNull().references('search_tasks.task_id').onDelete('cascade'))
    .addColumn('terms', 'text', (col) => col.notNull())
    .execute();
  await db.schema.createIndex('search_words_task').on('search_words').column('task_id').execute();
  if (sqlite) await fullTextSqlite(db);
  else await fullTextPostgres(db);
}

async function fullTextSqlite(db: Kysely<unknown>): Promise<void> {
  // Words are split by db/search-text.ts already; unicode61 splits the same way and folds nothing more.
  await sql`CREATE VIRTUAL TABLE search_words_fts USING fts5(terms, content='search_words', content_rowid='id',
    tokenize='unicode61 remove_diacritics 0', prefix='3', detail='none')`.execute(db);
  await sql`CREATE TRIGGER search_words_added AFTER INSERT ON search_words BEGIN
    INSERT INTO search_words_fts(rowid, terms) VALUES (new.id, new.terms); END`.execute(db);
  await sql`CREATE TRIGGER search_words_removed AFTER DELETE ON search_words BEGIN
    INSERT INTO search_words_fts(search_words_fts, rowid, terms) VALUES ('delete', old.id, old.terms); END`.execute(db);
}

async function fullTextPostgres(db: Kysely<unknown>): Promise<void> {
  await sql`ALTER TABLE search_words ADD COLUMN terms_vector tsvector
    GENERATED ALWAYS AS (strip(to_tsvector('simple'::regconfig, terms))) STORED`.execute(db);
  await sql`CREATE INDEX search_words_terms ON search_words USING gin (terms_vector)`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`DROP TABLE IF EXISTS search_words_fts`.execute(db);
  for (const table of ['search_words', 'search_entries', 'search_tasks']) await db.schema.dropTable(table).execute();
}
