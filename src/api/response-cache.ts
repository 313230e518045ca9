import type { FastifyInstance, FastifyRequest } from 'fastify';

/**
 * Pipelines poll `/tasks/view/<id>` and `/tasks/list` while they wait for results. Answers that come
 * only from the database are kept, keyed by URL and JSON style, and served again for as long as the
 * database's change token is the same; any write makes every entry stale. Without a change token
 * (a PostgreSQL node whose listening connection is down) nothing is cached.
 */
const CACHEABLE = /^(?:\/v1)?\/(?:tasks\/(?:view|list|sample)|files\/view|machines\/(?:list|view))(?:\/|$|\?)/;
const MAX_ENTRIES = 2000;

interface Entry {
  token: string;
  body: string;
}

declare module 'fastify' {
  interface FastifyRequest {
    cacheKey?: string;
    cacheToken?: string;
  }
}

export function registerResponseCache(app: FastifyInstance, changeToken: () => string | undefined): void {
  const entries = new Map<string, Entry>();

  app.addHook('onRequest', async (request, reply) => {
    if (request.method !== 'GET' || !CACHEABLE.test(request.url)) return;
    const token = changeToken();
    if (token === undefined) return;
    const key = keyOf(request);
    const entry = entries.get(key);
    if (entry?.token === token) {
      // Most recently used last, so eviction drops the oldest.
      entries.delete(key);
      entries.set(key, entry);
      // An identity serializer sends the text as it is, with the same Content-Type as a fresh answer.
      return reply.code(200).serializer(asIs).send(entry.body);
    }
    // The token is taken before the handler reads, so a write during the request makes the entry stale.
    request.cacheKey = key;
    request.cacheToken = token;
  });

  app.addHook('onSend', async (request, reply, payload) => {
    if (request.cacheKey === undefined || reply.statusCode !== 200 || typeof payload !== 'string') return payload;
    if (entries.size >= MAX_ENTRIES) entries.delete(entries.keys().next().value!);
    entries.set(request.cacheKey, { token: request.cacheToken!, body: payload });
    return payload;
  });
}

const asIs = (text: unknown) => text as string;

function keyOf(request: FastifyRequest): string {
  return `${request.headers['x-requested-with'] === 'XMLHttpRequest' ? 'c' : 'p'}${request.url}`;
}
