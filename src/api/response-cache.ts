import type { OutgoingHttpHeaders } from 'node:http';
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
  body: Buffer;
}

declare module 'fastify' {
  interface FastifyRequest {
    cacheKey?: string;
    cacheToken?: string;
  }
}

/** Register after the hooks that set the answer's headers and check authentication: a hit skips the rest. */
export function registerResponseCache(app: FastifyInstance, changeToken: () => string | undefined): void {
  const entries = new Map<string, Entry>();

  // Callback-style hooks: they run on every request, and a promise each costs more than a hit.
  app.addHook('onRequest', (request, reply, done) => {
    if (request.method !== 'GET' || !CACHEABLE.test(request.url)) return done();
    const token = changeToken();
    if (token === undefined) return done();
    const key = keyOf(request);
    const entry = entries.get(key);
    if (entry?.token === token) {
      // Most recently used last, so eviction drops the oldest.
      entries.delete(key);
      entries.set(key, entry);
      // The stored bytes go straight out with the headers the earlier hooks set, as a fresh answer
      // has them; the hook chain stops here (Fastify sees the reply as sent).
      reply.hijack();
      const headers = { ...reply.getHeaders(), 'content-length': entry.body.length } as OutgoingHttpHeaders;
      reply.raw.writeHead(200, headers);
      reply.raw.end(entry.body);
      return;
    }
    // The token is taken before the handler reads, so a write during the request makes the entry stale.
    request.cacheKey = key;
    request.cacheToken = token;
    done();
  });

  app.addHook('onSend', (request, reply, payload, done) => {
    if (request.cacheKey !== undefined && reply.statusCode === 200 && typeof payload === 'string') {
      if (entries.size >= MAX_ENTRIES) entries.delete(entries.keys().next().value!);
      entries.set(request.cacheKey, { token: request.cacheToken!, body: Buffer.from(payload) });
    }
    done(null, payload);
  });
}

function keyOf(request: FastifyRequest): string {
  return `${request.headers['x-requested-with'] === 'XMLHttpRequest' ? 'c' : 'p'}${request.url}`;
}
