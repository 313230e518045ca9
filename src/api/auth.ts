import { createHash, timingSafeEqual } from 'node:crypto';
import type { FastifyInstance } from 'fastify';

export const AUTH_REQUIRED_MESSAGE =
  "Authentication in the form of an 'Authorization: Bearer <TOKEN>' header is required";

/**
 * With a token configured, every request (any path, any method) must carry exactly
 * `Authorization: Bearer <token>`, as Cuckoo 2.0.7 requires. Digests make the comparison constant-time
 * whatever the lengths.
 */
export function registerAuth(app: FastifyInstance, token: string): void {
  if (token === '') return;
  const authorized = authorizationCheck(token);
  app.addHook('onRequest', (request, reply, done) => {
    if (authorized(request.headers.authorization) || isPublicPagePath(request.method, request.url)) return done();
    reply.code(401).send({ message: AUTH_REQUIRED_MESSAGE });
  });
}

/**
 * The web interface's page and bundled assets (GET /, /ui, /ui/... but not /ui/api/...) hold no data and
 * must load before anyone signs in, as must the answer to whether the interface has to ask for the token.
 */
export function isPublicPagePath(method: string, url: string): boolean {
  if (method !== 'GET' && method !== 'HEAD') return false;
  const path = url.split('?')[0]!;
  if (path === '/ui/api/session') return true;
  return path === '/' || path === '/ui' || (path.startsWith('/ui/') && !path.startsWith('/ui/api/'));
}

/** Whether an Authorization header lets a request in; every header does when no token is configured. */
export function authorizationCheck(token: string): (header: string | undefined) => boolean {
  if (token === '') return () => true;
  const expected = digest(`Bearer ${token}`);
  return (header) => typeof header === 'string' && timingSafeEqual(digest(header), expected);
}

function digest(text: string): Buffer {
  return createHash('sha256').update(text).digest();
}
