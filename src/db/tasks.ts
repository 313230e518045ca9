import type { Kysely, Transaction } from 'kysely';
import { nowIso } from '../util/time.js';
import { type NodeScope, ownedBy } from './node-scope.js';
import { type Claim, type ClaimRequest, claimNextTask } from './task-claims.js';
import type { Database, ErrorRow, GuestRow, NewTask, TaskRow, TaskStatus, TaskUpdate } from './schema.js';

export type Db = Kysely<Database> | Transaction<Database>;

export interface TaskListFilter {
  limit?: number;
  /** Applies only together with a limit, as in the API's /tasks/list/<limit>/<offset>. */
  offset?: number;
  status?: string;
  owner?: string;
  sampleId?: number;
  /** ISO timestamp: only tasks completed after it. */
  completedAfter?: string;
}

/** Statuses counted by `/cuckoo/status` beside the total. */
export const COUNTED_STATUSES = ['pending', 'running', 'completed', 'reported'] as const;

export class TaskStore {
  constructor(private readonly db: Kysely<Database>) {}

  async insert(task: NewTask, db: Db = this.db): Promise<number> {
    const row = await db.insertInto('tasks').values(task).returning('id').executeTakeFirstOrThrow();
    return row.id;
  }

  async get(id: number, db: Db = this.db): Promise<TaskRow | undefined> {
    return db.selectFrom('tasks').selectAll().where('id', '=', id).executeTakeFirst();
  }

  /** Ordered like Cuckoo: pending and running first (completed_on null), then oldest completed first. */
  async list(filter: TaskListFilter = {}): Promise<TaskRow[]> {
    let query = this.db.selectFrom('tasks').selectAll();
    if (filter.status !== undefined) query = query.where('status', '=', filter.status as TaskStatus);
    if (filter.owner) query = query.where('owner', '=', filter.owner);
    if (filter.sampleId !== undefined) query = query.where('sample_id', '=', filter.sampleId);
    if (filter.completedAfter !== undefined) query = query.where('completed_on', '>', filter.completedAfter);
    query = query
      .orderBy((eb) => eb.case().when('completed_on', 'is', null).then(0).else(1).end())
      .orderBy('completed_on')
      .orderBy('id');
    if (filter.limit !== undefined) {
      query = query.limit(filter.limit);
      if (filter.offset !== undefined) query = query.offset(filter.offset);
    }
    return query.execute();
  }

  /**
   * Pending tasks in the order they should run: higher priority first, then oldest. With `node`, only
   * those no node is pinned to or pinned to that one, so tasks waiting for other nodes never fill the page.
   */
  async queue(limit: number, node?: string): Promise<TaskRow[]> {
    return this.db
      .selectFrom('tasks')
      .selectAll()
      .where('status', '=', 'pending')
      .$if(node !== undefined, (query) => query.where((eb) => eb.or([eb('node', 'is', null), eb('node', '=', node!)])))
      .orderBy('priority', 'desc')
      .orderBy('added_on')
      .orderBy('id')
      .limit(limit)
      .execute();
  }

  /** PostgreSQL: claims the best pending task one of the node's free machines fits (see task-claims.ts). */
  async claimNext(request: ClaimRequest): Promise<Claim | undefined> {
    return claimNextTask(this.db, request);
  }

  /** The running tasks in the scope: those this node runs. */
  async runningOwned(scope: NodeScope): Promise<TaskRow[]> {
    return this.db.selectFrom('tasks').selectAll().where('status', '=', 'running').where(ownedBy(scope, 'node')).orderBy('id').execute();
  }

  /**
   * Takes one completed task that this node ran (its results are in this node's storage) and no worker
   * has processed yet; undefined when there is none.
   */
  async claimForProcessing(worker: string, scope: NodeScope): Promise<number | undefined> {
    for (let attempt = 0; attempt < 5; attempt++) {
      const candidate = await this.db
        .selectFrom('tasks')
        .select('id')
        .where('status', '=', 'completed')
        .where('processing', 'is', null)
        .where(ownedBy(scope, 'node'))
        .orderBy('completed_on')
        .orderBy('id')
        .executeTakeFirst();
      if (!candidate) return undefined;
      const result = await this.db
        .updateTable('tasks')
        .set({ processing: worker })
        .where('id', '=', candidate.id)
        .where('status', '=', 'completed')
        .where('processing', 'is', null)
        .executeTakeFirst();
      if (result.numUpdatedRows > 0n) return candidate.id;
    }
    return undefined;
  }

  async update(id: number, changes: TaskUpdate, db: Db = this.db): Promise<boolean> {
    const result = await db.updateTable('tasks').set(changes).where('id', '=', id).executeTakeFirst();
    return result.numUpdatedRows > 0n;
  }

  /** Moves a task to `to` only if it is still in one of `from`; false when another actor got there first. */
  async transition(id: number, from: readonly TaskStatus[], to: TaskStatus, changes: TaskUpdate = {}, db: Db = this.db) {
    const result = await db
      .updateTable('tasks')
      .set({ ...changes, status: to })
      .where('id', '=', id)
      .where('status', 'in', from)
      .executeTakeFirst();
    return result.numUpdatedRows > 0n;
  }

  /**
   * Ends a run: moves a task this node runs from running to `to`. False when the task is no longer
   * running here (another node requeued it after this node's lease expired).
   */
  async finishRun(id: number, node: string, to: TaskStatus, changes: TaskUpdate = {}): Promise<boolean> {
    const result = await this.db
      .updateTable('tasks')
      .set({ ...changes, status: to })
      .where('id', '=', id)
      .where('status', '=', 'running')
      .where('node', '=', node)
      .executeTakeFirst();
    return result.numUpdatedRows > 0n;
  }

  /** Which of these tasks still run on this node. */
  async stillRunningOn(node: string, taskIds: readonly number[]): Promise<Set<number>> {
    if (taskIds.length === 0) return new Set();
    const rows = await this.db.selectFrom('tasks').select('id').where('id', 'in', taskIds).where('status', '=', 'running').where('node', '=', node).execute();
    return new Set(rows.map((row) => row.id));
  }

  /**
   * Notes in the task's errors that it waits (action 'waiting'), unless it says so already: a unique index
   * (migration 0007) keeps one such note per task when several nodes notice at once.
   */
  async noteWaiting(taskId: number, message: string): Promise<void> {
    await this.db
      .insertInto('errors')
      .values({ task_id: taskId, message, action: 'waiting', added_on: nowIso() })
      .onConflict((oc) => oc.doNothing())
      .execute();
  }

  async delete(id: number, db: Db = this.db): Promise<boolean> {
    const result = await db.deleteFrom('tasks').where('id', '=', id).executeTakeFirst();
    return result.numDeletedRows > 0n;
  }

  async countByStatus(): Promise<Record<string, number>> {
    const rows = await this.db
      .selectFrom('tasks')
      .select(['status', (eb) => eb.fn.countAll<number | string>().as('count')])
      .groupBy('status')
      .execute();
    return Object.fromEntries(rows.map((row) => [row.status, Number(row.count)]));
  }

  async addError(taskId: number, message: string, action = '', db: Db = this.db): Promise<void> {
    await db.insertInto('errors').values({ task_id: taskId, message, action, added_on: nowIso() }).execute();
  }

  async errorsOf(taskIds: readonly number[]): Promise<Map<number, ErrorRow[]>> {
    if (taskIds.length === 0) return new Map();
    const rows = await this.db.selectFrom('errors').selectAll().where('task_id', 'in', taskIds).orderBy('id').execute();
    return groupBy(rows, (row) => row.task_id);
  }

  /** The latest guest (machine run) of each task. */
  async guestsOf(taskIds: readonly number[]): Promise<Map<number, GuestRow>> {
    if (taskIds.length === 0) return new Map();
    const rows = await this.db.selectFrom('guests').selectAll().where('task_id', 'in', taskIds).orderBy('id').execute();
    return new Map(rows.map((row) => [row.task_id, row]));
  }

  async taskIdsOfSample(sampleId: number): Promise<number[]> {
    const rows = await this.db.selectFrom('tasks').select('id').where('sample_id', '=', sampleId).orderBy('id').execute();
    return rows.map((row) => row.id);
  }

  /** Deletes a task unless it is running (a running task's machine still writes its folder); true when deleted. */
  async deleteUnlessRunning(taskId: number, db: Db = this.db): Promise<boolean> {
    const result = await db.deleteFrom('tasks').where('id', '=', taskId).where('status', '!=', 'running').executeTakeFirst();
    return result.numDeletedRows > 0n;
  }

  async anyTaskOfSample(sampleId: number, db: Db = this.db): Promise<boolean> {
    const row = await db.selectFrom('tasks').select('id').where('sample_id', '=', sampleId).limit(1).executeTakeFirst();
    return row !== undefined;
  }
}

function groupBy<T, K>(items: readonly T[], key: (item: T) => K): Map<K, T[]> {
  const groups = new Map<K, T[]>();
  for (const item of items) {
    const k = key(item);
    const group = groups.get(k);
    if (group) group.push(item);
    else groups.set(k, [item]);
  }
  return groups;
}
