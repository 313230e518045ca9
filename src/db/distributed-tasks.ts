import { type Kysely, sql, SqliteAdapter } from 'kysely';
import type { Database, TaskRow, TaskStatus } from './schema.js';

export interface DistributedTaskFilter {
  statuses?: readonly TaskStatus[];
  /** true: only tasks a node holds or is pinned to (tasks.node set); false: only those no node has. */
  onNode?: boolean;
  owner?: string;
  priority?: number;
  offset?: number;
  limit?: number;
}

/** Task counts grouped the way Cuckoo's distributed status needs them. */
export interface TaskCountRow {
  status: TaskStatus;
  priority: number;
  today: boolean;
  count: number;
}

/** Queries of Cuckoo's distributed API and of the driver of remote nodes over `tasks`. */
export class DistributedTaskStore {
  constructor(private readonly db: Kysely<Database>) {}

  /** By id, as Cuckoo's distributed API lists them. */
  async list(filter: DistributedTaskFilter): Promise<TaskRow[]> {
    if (filter.statuses?.length === 0) return [];
    let query = this.db.selectFrom('tasks').selectAll();
    if (filter.statuses !== undefined) query = query.where('status', 'in', filter.statuses);
    if (filter.onNode !== undefined) query = query.where('node', filter.onNode ? 'is not' : 'is', null);
    if (filter.owner) query = query.where('owner', '=', filter.owner);
    if (filter.priority !== undefined) query = query.where('priority', '=', filter.priority);
    query = query.orderBy('id');
    // SQLite takes an offset only after a limit.
    if (filter.limit !== undefined || filter.offset !== undefined) query = query.limit(filter.limit ?? Number.MAX_SAFE_INTEGER);
    if (filter.offset !== undefined) query = query.offset(filter.offset);
    return query.execute();
  }

  /**
   * The highest task id ever given out. Ids are never reused (migration 0001), so a smaller id without
   * a row belonged to a task that was deleted.
   */
  async highestIssuedId(): Promise<number> {
    const sqlite = this.db.getExecutor().adapter instanceof SqliteAdapter;
    const issued = sqlite
      ? sql<{ id: number | null }>`SELECT seq AS id FROM sqlite_sequence WHERE name = 'tasks'`
      : sql<{ id: number | null }>`SELECT pg_sequence_last_value(pg_get_serial_sequence('tasks', 'id')) AS id`;
    const row = (await issued.execute(this.db)).rows[0];
    return Number(row?.id ?? 0);
  }

  async counts(todayStart: string): Promise<TaskCountRow[]> {
    const rows = await this.db
      .selectFrom('tasks')
      .select((eb) => [
        'status',
        'priority',
        eb.case().when('added_on', '>=', todayStart).then(1).else(0).end().as('today'),
        eb.fn.countAll<number | string>().as('count'),
      ])
      .groupBy(['status', 'priority', 'today'])
      .execute();
    return rows.map((row) => ({ status: row.status, priority: row.priority, today: Number(row.today) === 1, count: Number(row.count) }));
  }

  /** Tasks in `status` held by (or pinned to) one of `nodes`, in queue order. */
  async onNodes(status: TaskStatus, nodes: readonly string[]): Promise<TaskRow[]> {
    if (nodes.length === 0) return [];
    return this.db
      .selectFrom('tasks')
      .selectAll()
      .where('status', '=', status)
      .where('node', 'in', nodes)
      .orderBy('priority', 'desc')
      .orderBy('added_on')
      .orderBy('id')
      .execute();
  }
}
