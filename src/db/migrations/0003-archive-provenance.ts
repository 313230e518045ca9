import type { Kysely } from 'kysely';

/**
 * Where an archive task's file came from: the submitted archive (a sample row of its own, its binary
 * in storage), the name it was submitted under, and the file's path inside it.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  // One column per statement: SQLite adds columns one at a time.
  await db.schema.alterTable('tasks').addColumn('archive_id', 'integer', (col) => col.references('samples.id')).execute();
  await db.schema.alterTable('tasks').addColumn('archive_name', 'text').execute();
  await db.schema.alterTable('tasks').addColumn('archive_member', 'text').execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  for (const column of ['archive_member', 'archive_name', 'archive_id']) await db.schema.alterTable('tasks').dropColumn(column).execute();
}
