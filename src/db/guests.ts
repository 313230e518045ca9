import type { Kysely } from 'kysely';
import { nowIso } from '../util/time.js';
import type { Db } from './tasks.js';
import type { Database, GuestStatus } from './schema.js';

/** Guests are the runs of tasks on machines, shown as a task's `guest`. */
export class GuestStore {
  constructor(private readonly db: Kysely<Database>) {}

  async create(taskId: number, machine: { name: string; label: string }, manager: string, db: Db = this.db): Promise<number> {
    const row = await db
      .insertInto('guests')
      .values({ task_id: taskId, name: machine.name, label: machine.label, manager, status: 'init', started_on: nowIso() })
      .returning('id')
      .executeTakeFirstOrThrow();
    return row.id;
  }

  async setStatus(id: number, status: GuestStatus): Promise<void> {
    const shutdown = status === 'stopped' ? { shutdown_on: nowIso() } : {};
    await this.db.updateTable('guests').set({ status, ...shutdown }).where('id', '=', id).execute();
  }

  /** After a crash: every guest of these machines that was still up is stopped now. */
  async stopUnfinishedOn(machineNames: readonly string[]): Promise<void> {
    if (machineNames.length === 0) return;
    await this.db
      .updateTable('guests')
      .set({ status: 'stopped', shutdown_on: nowIso() })
      .where('status', '!=', 'stopped')
      .where('name', 'in', machineNames)
      .execute();
  }

  /** The task each machine runs now, by machine name: the newest of its guests that is not stopped. */
  async currentTasks(): Promise<Map<string, number>> {
    const rows = await this.db.selectFrom('guests').select(['name', 'task_id']).where('status', '!=', 'stopped').orderBy('id').execute();
    return new Map(rows.map((row) => [row.name, row.task_id]));
  }
}
