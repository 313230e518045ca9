import type { IncomingHttpHeaders, IncomingMessage, OutgoingHttpHeaders, ServerResponse } from 'node:http';
import type { FastifyInstance } from 'fastify';

/**
 * Pipelines poll `/tasks/view/<id>` and `/tasks/list` while they wait for results. Answers that come
 * only from the database are kept, keyed by URL and JSON style, and served again for as long as the
 * database's change token is the same; any write makes every entry stale. Without a change token
 * (a PostgreSQL node whose listening connection is down) nothing is cached.
 *
 * A hit is answered before the framework sees the request (no routing, no request objects, no hooks):
 * the stored bytes with the headers the fresh answer had. Anything else, a request without the API
 * token or a session included, goes on to the routes.
 */
const CACHEABLE = /^(?:\/v1)?\/(?:tasks\/(?:view|list|sample)|files\/view|machines\/(?:list|view))(?:\/|$|\?)/;
const MAX_ENTRIES = 2000;

interface Entry {
  token: string;
  headers: OutgoingHttpHeaders;
  body: Buffer;
}

declare module 'fastify' {
  interface FastifyRequest {
    cacheKey?: string;
    cacheToken?: string;
  }
}

export class ResponseCache {
  private readonly entries = new Map<string, Entry>();

  constructor(
    private readonly changeToken: () => string | undefined,
    private readonly authorized: (headers: IncomingHttpHeaders) => boolean,
  ) {}

  /** Answers `request` from the cache and returns true, or returns false having done nothing. */
  serve(request: IncomingMessage, response: ServerResponse): boolean {
    const key = this.keyOf(request);
    if (key === undefined || !this.authorized(request.headers)) return false;
    const entry = this.entries.get(key);
    if (entry === undefined || entry.token !== this.changeToken()) return false;
    // Most recently used last, so eviction drops the oldest.
    this.entries.delete(key);
    this.entries.set(key, entry);
    response.writeHead(200, entry.headers);
    response.end(entry.body);
    return true;
  }

  /** Stores the answers the routes give to cacheable requests. Register after the hooks that set headers. */
  register(app: FastifyInstance): void {
    // Callback-style hooks: they run on every request, and a promise each would cost more than a hit.
    app.addHook('onRequest', (request, _reply, done) => {
      const key = this.keyOf(request.raw);
      // The token is taken before the handler reads, so a write during the request makes the entry stale.
      const token = key === undefined ? undefined : this.changeToken();
      if (token !== undefined) {
        request.cacheKey = key;
        request.cacheToken = token;
      }
      done();
    });

    app.addHook('onSend', (request, reply, payload, done) => {
      if (request.cacheKey !== undefined && reply.statusCode === 200 && typeof payload === 'string') {
        const body = Buffer.from(payload);
        const headers = { ...reply.getHeaders(), 'content-length': body.length } as OutgoingHttpHeaders;
        if (this.entries.size >= MAX_ENTRIES) this.entries.delete(this.entries.keys().next().value!);
        this.entries.set(request.cacheKey, { token: request.cacheToken!, headers, body });
      }
      done(null, payload);
    });
  }

  private keyOf(request: IncomingMessage): string | undefined {
    const url = request.url ?? '';
    if (request.method !== 'GET' || !CACHEABLE.test(url)) return undefined;
    return `${request.headers['x-requested-with'] === 'XMLHttpRequest' ? 'c' : 'p'}${url}`;
  }
}
