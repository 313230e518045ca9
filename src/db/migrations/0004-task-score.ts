import type { Kysely } from 'kysely';

/**
 * The score of a reported task, kept beside the task so that the web interface's task list can filter
 * and sort by it without reading reports. Null until the task is reported (and for tasks reported
 * before this column existed).
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('tasks').addColumn('score', 'double precision').execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('tasks').dropColumn('score').execute();
}
