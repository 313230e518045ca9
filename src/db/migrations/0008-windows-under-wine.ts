import { type Kysely, SqliteAdapter, sql } from 'kysely';
import { CLAIM_FUNCTION as CLAIM_FUNCTION_0007 } from './0007-task-claims.js';

/**
 * PostgreSQL only: `nestbox_claim_task` (migration 0007) gives a task asking for platform windows to a
 * linux machine, which runs it under Wine, when the cluster has no enabled machine of platform windows;
 * with one, such tasks stay the Windows machines'. SQLite nodes claim in the scheduler itself.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  if (db.getExecutor().adapter instanceof SqliteAdapter) return;
  await sql.raw(CLAIM_FUNCTION).execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  if (db.getExecutor().adapter instanceof SqliteAdapter) return;
  await sql`DROP FUNCTION IF EXISTS nestbox_claim_task(text, boolean, text[], text[], integer[], text)`.execute(db);
  await sql.raw(CLAIM_FUNCTION_0007).execute(db);
}

/** Migration 0007's fit of a task to a free machine f: platform none or the machine's. */
const FIT_0007 = "(t.platform = '' or t.platform = f.platform)";
/** The fit now: also windows on a machine of kind linux (Wine), while no enabled Windows machine exists. */
const FIT = `(t.platform = '' or t.platform = f.platform
    or (t.platform = 'windows' and f.kind = 'linux'
        and not exists (select 1 from machines w where w.enabled = 1 and w.platform = 'windows')))`;

/**
 * Migration 0007's function with the fit of the scheduler's machineFits() (scheduler/matching.ts): the
 * task names the machine, or names none and asks for no platform, the machine's, or windows from a
 * machine of kind linux while the cluster has no enabled Windows machine; and only for tags the machine
 * has. Still one statement with FOR UPDATE SKIP LOCKED.
 */
const CLAIM_FUNCTION = withFit(CLAIM_FUNCTION_0007.replace('CREATE FUNCTION', 'CREATE OR REPLACE FUNCTION'));

function withFit(text: string): string {
  if (!text.includes(FIT_0007)) throw new Error("migration 0008: migration 0007's claim function is not the one it changes");
  return text.replace(FIT_0007, FIT);
}
