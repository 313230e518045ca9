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
    if (authorized(request.headers.authorization)) return done();
    reply.code(401).send({ message: AUTH_REQUIRED_MESSAGE });
  });
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
