import type { FastifyReply, FastifyRequest } from 'fastify';

/**
 * After a failure part-way through an upload, the rest of the body is read and dropped and the
 * connection closes after the answer, so the client gets the error instead of a stalled upload.
 */
export function abandonBody(request: FastifyRequest, reply: FastifyReply): void {
  if (request.raw.complete) return;
  reply.header('connection', 'close');
  request.raw.resume();
}
