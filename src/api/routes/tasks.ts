import type { FastifyRequest } from 'fastify';
import type { AppContext } from '../../app.js';
import type { TaskListFilter } from '../../db/tasks.js';
import { invalidInput, notFound } from '../../errors.js';
import { getDetailedTask, listDetailedTasks, type DetailedTask } from '../../tasks/details.js';
import { deleteTask, rebootTask, rereportTask, rescheduleTask } from '../../tasks/lifecycle.js';
import { taskJson } from '../serialize.js';
import { idParam, INT, queryParam } from '../params.js';
import type { Registrar } from './registrar.js';

/**
 * Listing, viewing and the operations on existing tasks (cuckoo-compat §4.4–§4.8, §4.12, §4.13).
 * Mutating operations are GETs, as in Cuckoo; a HEAD request to them only checks that the task exists
 * and never changes anything.
 */
export function taskRoutes(r: Registrar, ctx: AppContext): void {
  r.get(
    ['/tasks/list', `/tasks/list/${INT('limit')}`, `/tasks/list/${INT('limit')}/${INT('offset')}`],
    async (request) => ({ tasks: await tasksJson(ctx, { ...pageOf(request), ...listFilterOf(request) }) }),
    { v1: true },
  );

  r.get(
    `/tasks/sample/${INT('sample_id')}`,
    async (request) => ({ tasks: await tasksJson(ctx, { ...listFilterOf(request), sampleId: idParam(request, 'sample_id') }) }),
    { v1: true },
  );

  r.get(
    `/tasks/view/${INT('task_id')}`,
    async (request) => {
      const detailed = await getDetailedTask(ctx.stores, idParam(request, 'task_id'));
      if (!detailed) throw notFound('Task not found');
      return { task: toJson(detailed) };
    },
    { v1: true },
  );

  r.get(
    [`/tasks/reschedule/${INT('task_id')}`, `/tasks/reschedule/${INT('task_id')}/${INT('priority')}`],
    async (request) => {
      const taskId = idParam(request, 'task_id');
      if (request.method === 'HEAD') return requireTask(ctx, taskId, 'There is no analysis with the specified ID');
      const raw = (request.params as { priority?: string }).priority;
      const newId = await rescheduleTask(ctx, taskId, raw === undefined ? 1 : Number(raw));
      return { status: 'OK', task_id: newId };
    },
    { v1: true },
  );

  r.get(
    `/tasks/delete/${INT('task_id')}`,
    async (request) => {
      const taskId = idParam(request, 'task_id');
      if (request.method === 'HEAD') return requireTask(ctx, taskId, 'Task not found');
      await deleteTask(ctx, taskId);
      return { status: 'OK' };
    },
    { v1: true },
  );

  r.get(`/tasks/rereport/${INT('task_id')}`, async (request) => {
    const taskId = idParam(request, 'task_id');
    if (request.method === 'HEAD') return requireTask(ctx, taskId, 'Task not found');
    return { success: await rereportTask(ctx, taskId) };
  });

  r.get(`/tasks/reboot/${INT('task_id')}`, async (request) => {
    const taskId = idParam(request, 'task_id');
    if (request.method === 'HEAD') return requireTask(ctx, taskId, 'Error creating reboot task');
    return { reboot_id: await rebootTask(ctx, taskId), task_id: taskId };
  });
}

async function tasksJson(ctx: AppContext, filter: TaskListFilter) {
  return (await listDetailedTasks(ctx.stores, filter)).map(toJson);
}

const toJson = ({ task, details }: DetailedTask) => taskJson(task, details);

function pageOf(request: FastifyRequest): Pick<TaskListFilter, 'limit' | 'offset'> {
  const { limit, offset } = request.params as { limit?: string; offset?: string };
  // Digits beyond the safe range can only mean "everything" (limit) or "past the end" (offset).
  const clamp = (text: string) => Math.min(Number(text), Number.MAX_SAFE_INTEGER);
  return {
    ...(limit === undefined ? {} : { limit: clamp(limit) }),
    ...(offset === undefined ? {} : { offset: clamp(offset) }),
  };
}

/** `status`, `owner` and `completed_after`; empty values mean no filter, as in Cuckoo. */
function listFilterOf(request: FastifyRequest): TaskListFilter {
  const status = queryParam(request, 'status');
  const owner = queryParam(request, 'owner');
  const completedAfter = queryParam(request, 'completed_after');
  return {
    ...(status ? { status } : {}),
    ...(owner ? { owner } : {}),
    ...(completedAfter ? { completedAfter: isoFromUnixSeconds(completedAfter) } : {}),
  };
}

function isoFromUnixSeconds(text: string): string {
  const seconds = /^\s*[+-]?\d+\s*$/.test(text) ? Number(text) : NaN;
  const date = new Date(seconds * 1000);
  if (Number.isNaN(date.getTime())) {
    throw invalidInput('completed_after must be a UNIX timestamp in whole seconds', { context: { completed_after: text } });
  }
  return date.toISOString();
}

async function requireTask(ctx: AppContext, taskId: number, message: string) {
  if (!(await ctx.stores.tasks.get(taskId))) throw notFound(message, { context: { taskId } });
  return {};
}
