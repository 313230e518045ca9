import type { FastifyInstance } from 'fastify';
import type { AppContext } from '../app.js';
import type { SearchQuery } from '../db/search.js';
import { MAX_QUERY } from '../db/search-text.js';
import { invalidInput } from '../errors.js';
import { isSearchField, SEARCH_FIELDS } from '../report/search-fields.js';

const DEFAULT_LIMIT = 50;
const MAX_LIMIT = 200;
const MAX_OFFSET = 100_000;

/**
 * GET /ui/api/search?q=&field=&limit=&offset=: the analyses whose reports hold the text, best matches
 * first, each with the values that matched -> {results: [{id, target, score, category, added_on,
 * matches: [{field, value, kind}]}], total, tookMs}.
 */
export function searchRoutes(app: FastifyInstance, ctx: AppContext): void {
  app.get('/ui/api/search', async (request) => {
    const query = searchQueryOf(request.query as Record<string, unknown>);
    const started = performance.now();
    const page = await ctx.stores.search.search(query);
    return { ...page, tookMs: Math.round((performance.now() - started) * 10) / 10 };
  });
}

function searchQueryOf(params: Record<string, unknown>): SearchQuery {
  const text = single(params, 'q')?.trim() ?? '';
  if (text === '') throw invalidInput('Search text (q) is required');
  if (text.length > MAX_QUERY) throw invalidInput(`Search text (q) is longer than ${MAX_QUERY} characters`);
  const field = single(params, 'field') || undefined;
  if (field !== undefined && !isSearchField(field)) {
    throw invalidInput(`Unknown search field ${JSON.stringify(field)}; one of ${SEARCH_FIELDS.join(', ')}`);
  }
  return {
    text,
    field,
    limit: integer(params, 'limit', DEFAULT_LIMIT, 1, MAX_LIMIT),
    offset: integer(params, 'offset', 0, 0, MAX_OFFSET),
  };
}

/** A query parameter given at most once. */
function single(params: Record<string, unknown>, name: string): string | undefined {
  const value = params[name];
  if (value === undefined || typeof value === 'string') return value;
  throw invalidInput(`${name} must be given once`);
}

function integer(params: Record<string, unknown>, name: string, fallback: number, min: number, max: number): number {
  const text = single(params, name);
  if (text === undefined || text === '') return fallback;
  const value = Number(text);
  if (!/^\d+$/.test(text) || value < min || value > max) throw invalidInput(`${name} must be a whole number from ${min} to ${max}`);
  return value;
}
