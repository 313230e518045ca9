import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import type { AppContext } from '../app.js';
import { idParam, INT } from '../api/params.js';
import { TaskCalls } from './task-calls.js';
import { validated } from './validation.js';
import { CALL_CATEGORIES } from '../report/call-categories.js';

/** Most calls one page may hold. */
export const MAX_PAGE = 1000;

const integer = (min: number, max: number) => z.coerce.number().int().min(min).max(max);

const callsQuery = z.object({
  pid: integer(0, 2 ** 31).optional(),
  /** System call names, separated by commas: calls of any of them. */
  api: z
    .string()
    .max(2000)
    .transform((names) => names.split(',').map((name) => name.trim()).filter((name) => name !== ''))
    .optional(),
  category: z.enum(CALL_CATEGORIES).optional(),
  /** Text looked for in the calls' arguments. */
  q: z.string().max(1000).optional(),
  offset: integer(0, Number.MAX_SAFE_INTEGER).default(0),
  limit: integer(1, MAX_PAGE).default(100),
});

/**
 * The behaviour section of the analysis page, paginated on the server from the task's calls index:
 * GET /ui/api/tasks/:id/processes and GET /ui/api/tasks/:id/calls?pid=&api=&category=&q=&offset=&limit=.
 */
export function callsRoutes(app: FastifyInstance, ctx: AppContext): void {
  const calls = new TaskCalls(ctx);

  app.get(`/ui/api/tasks/${INT('id')}/processes`, async (request) => calls.read(idParam(request, 'id'), (index) => index.processes()));

  app.get(`/ui/api/tasks/${INT('id')}/calls`, async (request) => {
    const query = validated(callsQuery, withoutEmpty(request.query), 'query');
    const filter = { pid: query.pid, apis: query.api, category: query.category, text: query.q, offset: query.offset, limit: query.limit };
    const page = await calls.read(idParam(request, 'id'), (index) => index.calls(filter));
    return { ...page, offset: query.offset, limit: query.limit };
  });
}

/** The query without its empty parameters: a form's blank field (`pid=`) filters nothing. */
function withoutEmpty(query: unknown): Record<string, unknown> {
  return Object.fromEntries(Object.entries(query ?? {}).filter(([, value]) => value !== ''));
}
