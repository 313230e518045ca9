import type { Kysely } from 'kysely';
import type { MachineConfig } from '../config/schema.js';
import { NestboxError } from '../errors.js';
import { nowIso } from '../util/time.js';
import { encodeList } from './json-columns.js';
import { type NodeScope, ownedBy } from './node-scope.js';
import type { Db } from './tasks.js';
import type { Database, MachineRow } from './schema.js';

export class MachineStore {
  constructor(private readonly db: Kysely<Database>) {}

  /**
   * Makes this node's machines match its configuration: configured machines are created or updated
   * (keeping their ids) under this node's name, and this node's other machines are disabled; other nodes'
   * machines are left alone. Called at start-up, when nothing can hold a lock from this process yet.
   * A configured name another node already owns is refused: machine names are unique in the cluster.
   */
  async syncFromConfig(machines: readonly MachineConfig[], scope: NodeScope): Promise<void> {
    await this.db.transaction().execute(async (trx) => {
      await refuseOthersNames(trx, machines, scope);
      await trx.updateTable('machines').set({ enabled: 0 }).where(ownedBy(scope, 'node')).execute();
      for (const machine of machines) {
        const values = { ...machineValues(machine), node: scope.node, enabled: 1 };
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

  /** The enabled machines in the scope: this node's own. */
  async listOwned(scope: NodeScope, db: Db = this.db): Promise<MachineRow[]> {
    return db.selectFrom('machines').selectAll().where('enabled', '=', 1).where(ownedBy(scope, 'node')).orderBy('id').execute();
  }

  /** Names of this node's machines, disabled ones included (their guests may still be up after a crash). */
  async namesOwned(scope: NodeScope): Promise<string[]> {
    const rows = await this.db.selectFrom('machines').select('name').where(ownedBy(scope, 'node')).execute();
    return rows.map((row) => row.name);
  }

  /** After a restart: none of this node's machines runs anything. Other nodes' locks are theirs. */
  async unlockOwned(scope: NodeScope): Promise<void> {
    await this.db
      .updateTable('machines')
      .set({ locked: 0, locked_changed_on: nowIso() })
      .where('locked', '=', 1)
      .where(ownedBy(scope, 'node'))
      .execute();
  }

  async setStatus(id: number, status: string, db: Db = this.db): Promise<void> {
    await db.updateTable('machines').set({ status, status_changed_on: nowIso() }).where('id', '=', id).execute();
  }
}

function machineValues(machine: MachineConfig) {
  return {
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
  };
}

async function refuseOthersNames(db: Db, machines: readonly MachineConfig[], scope: NodeScope): Promise<void> {
  if (scope.everything || machines.length === 0) return;
  const taken = await db
    .selectFrom('machines')
    .select(['name', 'node'])
    .where('name', 'in', machines.map((machine) => machine.name))
    .where('node', '!=', scope.node)
    .where('node', '!=', '')
    .execute();
  if (taken.length === 0) return;
  const list = taken.map((row) => `"${row.name}" (node ${row.node})`).join(', ');
  throw new NestboxError(
    'invalid_config',
    `machine names are unique in the cluster, and another node already runs ${list}: rename this node's machines (node "${scope.node}"), ` +
      "or, if this is that node under a new host name, set cluster.node_name to its name",
    { context: { node: scope.node, taken } },
  );
}
