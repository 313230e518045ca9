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
  const expected = digest(`Bearer ${token}`);
  app.addHook('onRequest', (request, reply, done) => {
    const header = request.headers.authorization;
    if (typeof header === 'string' && timingSafeEqual(digest(header), expected)) return done();
    reply.code(401).send({ message: AUTH_REQUIRED_MESSAGE });
  });
}

function digest(text: string): Buffer {
  return createHash('sha256').update(text).digest();
}
