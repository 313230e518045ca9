import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import type { AppContext } from '../app.js';
import { errorAnswer } from '../api/error-handler.js';
import { TASK_STATUSES, type TaskStatus } from '../db/schema.js';
import { TASK_SORTS, type TaskPageQuery } from '../db/task-pages.js';
import { deleteTask, rereportTask, rescheduleTask } from '../tasks/lifecycle.js';
import { optional, validated } from './validation.js';
import { taskListRows } from './task-rows.js';

const MAX_PAGE_SIZE = 500;
const MAX_BULK = 1000;

const text = optional(z.string().max(1024));
const score = optional(z.coerce.number().min(0).max(10));

const listQuery = z.object({
  state: optional(z.string().transform((value, context) => statesOf(value, context))),
  category: optional(z.enum(['file', 'url', 'archive'])),
  scoreMin: score,
  scoreMax: score,
  from: optional(z.string().transform((value, context) => isoOf(value, 'start', context))),
  to: optional(z.string().transform((value, context) => isoOf(value, 'end', context))),
  machine: text,
  package: text,
  owner: text,
  tag: text,
  sort: optional(z.enum(TASK_SORTS)).default('added_on'),
  order: optional(z.enum(['asc', 'desc'])).default('desc'),
  page: optional(z.coerce.number().int().min(1).max(1_000_000)).default(1),
  pageSize: optional(z.coerce.number().int().min(1).max(MAX_PAGE_SIZE)).default(50),
});

const bulkBody = z.strictObject({
  action: z.enum(['delete', 'reschedule', 'rereport']),
  ids: z.array(z.number().int().positive()).min(1).max(MAX_BULK),
});

interface BulkResult {
  id: number;
  ok: boolean;
  message?: string;
  newId?: number;
}

/** GET /ui/api/tasks (the filtered, sorted, paginated task list) and POST /ui/api/tasks/bulk. */
export async function taskListRoutes(app: FastifyInstance, ctx: AppContext): Promise<void> {
  app.get('/ui/api/tasks', async (request) => {
    const parsed = validated(listQuery, request.query, 'query');
    const query: TaskPageQuery = { ...parsed, states: parsed.state };
    const { rows, total } = await ctx.stores.taskPages.page(query);
    return { tasks: await taskListRows(ctx.stores, rows), total, page: query.page, pageSize: query.pageSize };
  });

  app.post('/ui/api/tasks/bulk', async (request) => {
    const { action, ids } = validated(bulkBody, request.body, 'request body');
    const results: BulkResult[] = [];
    // One at a time, in the order given: each is the same operation as the task's own API route.
    for (const id of new Set(ids)) results.push(await applyTo(ctx, action, id));
    return { results };
  });
}

async function applyTo(ctx: AppContext, action: z.infer<typeof bulkBody>['action'], id: number): Promise<BulkResult> {
  try {
    if (action === 'delete') await deleteTask(ctx, id);
    if (action === 'reschedule') return { id, ok: true, newId: await rescheduleTask(ctx, id) };
    if (action === 'rereport' && !(await rereportTask(ctx, id))) {
      return { id, ok: false, message: 'Only a reported task can be reported again' };
    }
    return { id, ok: true };
  } catch (error) {
    const { status, message } = errorAnswer(error);
    if (status >= 500) ctx.log.error({ err: error, taskId: id, action }, message);
    return { id, ok: false, message };
  }
}

function statesOf(value: string, context: z.RefinementCtx): TaskStatus[] {
  const states = value.split(',').map((state) => state.trim()).filter(Boolean);
  const unknown = states.find((state) => !(TASK_STATUSES as readonly string[]).includes(state));
  if (unknown !== undefined) context.addIssue({ code: 'custom', message: `unknown state ${JSON.stringify(unknown)}; one of ${TASK_STATUSES.join(', ')}` });
  return states as TaskStatus[];
}

/** A date (`2026-01-31`, the whole day) or a timestamp, as the ISO text tasks are stored with. */
function isoOf(value: string, edge: 'start' | 'end', context: z.RefinementCtx): string {
  const dayOnly = /^\d{4}-\d{2}-\d{2}$/.test(value);
  const time = Date.parse(dayOnly ? `${value}T${edge === 'start' ? '00:00:00.000' : '23:59:59.999'}Z` : value);
  if (Number.isNaN(time)) {
    context.addIssue({ code: 'custom', message: `not a date: ${JSON.stringify(value)}` });
    return value;
  }
  return new Date(time).toISOString();
}
