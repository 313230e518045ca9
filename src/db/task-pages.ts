import { type Expression, type ExpressionBuilder, type Kysely, type SqlBool, sql } from 'kysely';
import type { Database, TaskCategory, TaskRow, TaskStatus } from './schema.js';

export const TASK_SORTS = ['added_on', 'id', 'score', 'completed_on'] as const;
export type TaskSort = (typeof TASK_SORTS)[number];

/** Which tasks the web interface's task list shows; every field left out matches every task. */
export interface TaskPageFilter {
  states?: readonly TaskStatus[];
  category?: TaskCategory;
  scoreMin?: number;
  scoreMax?: number;
  /** ISO timestamps bounding `added_on`, both inclusive. */
  from?: string;
  to?: string;
  /** The machine asked for or the one the task ran on. */
  machine?: string;
  package?: string;
  owner?: string;
  tag?: string;
}

export interface TaskPageQuery extends TaskPageFilter {
  sort: TaskSort;
  order: 'asc' | 'desc';
  /** From 1. */
  page: number;
  pageSize: number;
}

/** The task list of the web interface: filtered, sorted and paginated in the database. */
export class TaskPageStore {
  constructor(private readonly db: Kysely<Database>) {}

  async page(query: TaskPageQuery): Promise<{ rows: TaskRow[]; total: number }> {
    const where = (eb: ExpressionBuilder<Database, 'tasks'>) => eb.and(conditions(eb, query));
    const counted = this.db
      .selectFrom('tasks')
      .where(where)
      .select((eb) => eb.fn.countAll<number | string>().as('count'))
      .executeTakeFirstOrThrow();
    // Tasks without a score or a completion time come last whichever the order.
    const rows = this.db
      .selectFrom('tasks')
      .selectAll()
      .where(where)
      .orderBy((eb) => eb.case().when(query.sort, 'is', null).then(1).else(0).end())
      .orderBy(query.sort, query.order)
      .orderBy('id', query.order)
      .limit(query.pageSize)
      .offset((query.page - 1) * query.pageSize)
      .execute();
    const [count, page] = await Promise.all([counted, rows]);
    return { rows: page, total: Number(count.count) };
  }
}

function conditions(eb: ExpressionBuilder<Database, 'tasks'>, filter: TaskPageFilter): Array<Expression<SqlBool>> {
  const list: Array<Expression<SqlBool>> = [];
  if (filter.states !== undefined && filter.states.length > 0) list.push(eb('status', 'in', filter.states));
  if (filter.category !== undefined) list.push(eb('category', '=', filter.category));
  if (filter.scoreMin !== undefined) list.push(eb('score', '>=', filter.scoreMin));
  if (filter.scoreMax !== undefined) list.push(eb('score', '<=', filter.scoreMax));
  if (filter.from !== undefined) list.push(eb('added_on', '>=', filter.from));
  if (filter.to !== undefined) list.push(eb('added_on', '<=', filter.to));
  if (filter.package !== undefined) list.push(eb('package', '=', filter.package));
  if (filter.owner !== undefined) list.push(eb('owner', '=', filter.owner));
  if (filter.machine !== undefined) list.push(ranOrAskedFor(eb, filter.machine));
  if (filter.tag !== undefined) list.push(hasTag(filter.tag));
  return list;
}

function ranOrAskedFor(eb: ExpressionBuilder<Database, 'tasks'>, machine: string): Expression<SqlBool> {
  const ranOn = eb.exists(
    eb.selectFrom('guests').select('guests.id').whereRef('guests.task_id', '=', 'tasks.id').where('guests.name', '=', machine),
  );
  return eb.or([eb('tasks.machine', '=', machine), ranOn]);
}

/** `tags` holds a JSON array of strings (json-columns.ts): the tag appears in it as its JSON string. */
function hasTag(tag: string): Expression<SqlBool> {
  const pattern = `%${JSON.stringify(tag).replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
  return sql<SqlBool>`tags like ${pattern} escape '\\'`;
}
