import type { Kysely, Updateable } from 'kysely';
import type { Database, MachineRow, NodeRow, NodesTable } from './schema.js';

/** A remote node's machine as its /machines/list shows it, kept in `nodes.machines`. */
export interface RemoteMachine {
  name: string;
  platform: string;
  tags: string[];
}

export interface NewRemoteNode {
  name: string;
  url: string;
  token: string | null;
  mode: string;
  machines: readonly RemoteMachine[];
}

/**
 * The rows of `nodes` as Cuckoo's distributed API sees them (list, view, add, update, disable), and the
 * machines of nestbox's own nodes. Remote nodes (role `remote`) are the ones added through that API.
 */
export class DistributedNodeStore {
  constructor(private readonly db: Kysely<Database>) {}

  /** Nodes that run tasks (every role but `main`), by name. */
  async list(): Promise<NodeRow[]> {
    return this.db.selectFrom('nodes').selectAll().where('role', '!=', 'main').orderBy('name').execute();
  }

  async get(name: string): Promise<NodeRow | undefined> {
    return this.db.selectFrom('nodes').selectAll().where('name', '=', name).where('role', '!=', 'main').executeTakeFirst();
  }

  /** Whether any row (of any role) has this name: node names are unique in the cluster. */
  async nameTaken(name: string): Promise<boolean> {
    return (await this.db.selectFrom('nodes').select('id').where('name', '=', name).executeTakeFirst()) !== undefined;
  }

  async addRemote(node: NewRemoteNode): Promise<void> {
    await this.db
      .insertInto('nodes')
      .values({ name: node.name, role: 'remote', url: node.url, token: node.token, mode: node.mode, enabled: 1, machines: JSON.stringify(node.machines) })
      .execute();
  }

  /** False when there is no such node. */
  async update(name: string, changes: Updateable<NodesTable>): Promise<boolean> {
    const result = await this.db.updateTable('nodes').set(changes).where('name', '=', name).where('role', '!=', 'main').executeTakeFirst();
    return result.numUpdatedRows > 0n;
  }

  /** A remote node's new name, also on the tasks it holds or is pinned to. */
  async rename(from: string, to: string): Promise<void> {
    await this.db.transaction().execute(async (trx) => {
      await trx.updateTable('nodes').set({ name: to }).where('name', '=', from).where('role', '=', 'remote').execute();
      await trx.updateTable('tasks').set({ node: to }).where('node', '=', from).execute();
    });
  }

  /** The remote nodes, which the main node drives over their REST API. */
  async remotes(): Promise<NodeRow[]> {
    return this.db.selectFrom('nodes').selectAll().where('role', '=', 'remote').orderBy('id').execute();
  }

  /** The machines nestbox's own nodes run, by node name. */
  async machinesByNode(): Promise<Map<string, MachineRow[]>> {
    const rows = await this.db.selectFrom('machines').selectAll().where('enabled', '=', 1).orderBy('id').execute();
    const byNode = new Map<string, MachineRow[]>();
    for (const row of rows) byNode.set(row.node, [...(byNode.get(row.node) ?? []), row]);
    return byNode;
  }
}

/** A remote node's stored machines. */
export function remoteMachinesOf(node: Pick<NodeRow, 'machines'>): RemoteMachine[] {
  const value: unknown = JSON.parse(node.machines || '[]');
  return Array.isArray(value) ? (value as RemoteMachine[]) : [];
}
