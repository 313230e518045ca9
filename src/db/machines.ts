import type { Kysely } from 'kysely';
import type { MachineConfig } from '../config/schema.js';
import { nowIso } from '../util/time.js';
import { encodeList } from './json-columns.js';
import type { Db } from './tasks.js';
import type { Database, MachineRow } from './schema.js';

export class MachineStore {
  constructor(private readonly db: Kysely<Database>) {}

  /**
   * Makes the table match the configuration: configured machines are created or updated (keeping their
   * ids), others are disabled. Called at start-up, when nothing can hold a lock from this process yet.
   */
  async syncFromConfig(machines: readonly MachineConfig[]): Promise<void> {
    await this.db.transaction().execute(async (trx) => {
      await trx.updateTable('machines').set({ enabled: 0 }).execute();
      for (const machine of machines) {
        const values = {
          name: machine.name,
          label: machine.label ?? machine.name,
          kind: machine.kind,
          ip: machine.ip,
          platform: machine.platform,
          tags: encodeList(machine.tags),
          options: encodeList(machine.options),
          interface: machine.interface,
          snapshot: machine.snapshot,
          resultserver_ip: machine.resultserver_ip,
          resultserver_port: machine.resultserver_port,
          enabled: 1,
        };
        await trx
          .insertInto('machines')
          .values(values)
          .onConflict((oc) => oc.column('name').doUpdateSet(values))
          .execute();
      }
    });
  }

  async list(): Promise<MachineRow[]> {
    return this.db.selectFrom('machines').selectAll().where('enabled', '=', 1).orderBy('id').execute();
  }

  async getByName(name: string, db: Db = this.db): Promise<MachineRow | undefined> {
    return db.selectFrom('machines').selectAll().where('name', '=', name).where('enabled', '=', 1).executeTakeFirst();
  }

  /** Takes the lock of a free machine; false when someone else holds it. */
  async lock(id: number, db: Db = this.db): Promise<boolean> {
    const result = await db
      .updateTable('machines')
      .set({ locked: 1, locked_changed_on: nowIso() })
      .where('id', '=', id)
      .where('locked', '=', 0)
      .executeTakeFirst();
    return result.numUpdatedRows > 0n;
  }

  async unlock(id: number, db: Db = this.db): Promise<void> {
    await db.updateTable('machines').set({ locked: 0, locked_changed_on: nowIso() }).where('id', '=', id).execute();
  }

  async unlockAll(): Promise<void> {
    await this.db.updateTable('machines').set({ locked: 0, locked_changed_on: nowIso() }).where('locked', '=', 1).execute();
  }

  async setStatus(id: number, status: string, db: Db = this.db): Promise<void> {
    await db.updateTable('machines').set({ status, status_changed_on: nowIso() }).where('id', '=', id).execute();
  }
}
