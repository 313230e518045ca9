import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import type { AppContext } from '../app.js';
import { MAX_QUERY } from '../db/search-text.js';
import { SEARCH_FIELDS } from '../report/search-fields.js';
import { optional, validated } from './validation.js';

const searchQuery = z.object({
  q: z.string().trim().min(1, 'the search text is required').max(MAX_QUERY),
  field: optional(z.enum(SEARCH_FIELDS)),
  limit: optional(z.coerce.number().int().min(1).max(200)).default(50),
  offset: optional(z.coerce.number().int().min(0).max(100_000)).default(0),
});

/**
 * GET /ui/api/search?q=&field=&limit=&offset=: the analyses whose reports hold the text, best matches
 * first, each with the values that matched -> {results: [{id, target, score, category, added_on,
 * matches: [{field, value, kind}]}], total, tookMs}.
 */
export function searchRoutes(app: FastifyInstance, ctx: AppContext): void {
  app.get('/ui/api/search', async (request) => {
    const { q, field, limit, offset } = validated(searchQuery, request.query, 'query');
    const started = performance.now();
    const page = await ctx.stores.search.search({ text: q, field, limit, offset });
    return { ...page, tookMs: Math.round((performance.now() - started) * 10) / 10 };
  });
}
