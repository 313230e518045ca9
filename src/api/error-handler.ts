import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { type ErrorKind, NestboxError } from '../errors.js';
import { multipartProblem } from './multipart-errors.js';

/** The one place where failures become HTTP statuses. */
const STATUS_OF_KIND: Record<ErrorKind, number> = {
  invalid_input: 400,
  unauthorized: 401,
  forbidden: 403,
  not_found: 404,
  method_not_allowed: 405,
  timed_out: 408,
  conflict: 409,
  too_large: 413,
  not_finished: 420,
  expectation_failed: 417,
  headers_too_large: 431,
  unavailable: 500,
  invalid_config: 500,
  internal: 500,
};

/** What a client is told about a failure. */
export interface ErrorAnswer {
  status: number;
  message: string;
}

/** The status and message for any failure, also for answers written outside Fastify (unrouted.ts). */
export function errorAnswer(error: unknown): ErrorAnswer {
  const known = domainError(error);
  const status = statusOf(known);
  return { status, message: clientMessage(known, status) };
}

/**
 * The error handler of the API: logs the failure and answers its status with `bodyOf(message)`
 * (`{message}` as in Cuckoo; Cuckoo's distributed API adds `success: false`).
 */
export function errorHandler(bodyOf: (message: string) => Record<string, unknown> = (message) => ({ message })) {
  return (error: unknown, request: FastifyRequest, reply: FastifyReply) => {
    const { status, message } = errorAnswer(error);
    const context = contextOf(domainError(error));
    if (status >= 500) request.log.error({ err: error, context }, message);
    else request.log.info({ status, context }, message);
    if (reply.sent || reply.raw.headersSent) {
      reply.raw.destroy();
      return;
    }
    // Fastify drops the type set earlier when a handler throws; errors are JSON too.
    return reply.code(status).type('application/json').send(bodyOf(message));
  };
}

export function registerErrorHandlers(app: FastifyInstance): void {
  app.setErrorHandler(errorHandler());

  app.setNotFoundHandler((request, reply) =>
    reply.code(404).send({ message: `No such route: ${request.method} ${request.url.split('?')[0]}` }),
  );
}

/** Library errors that stand for a domain error (a malformed multipart body) become that error. */
function domainError(error: unknown): unknown {
  return multipartProblem(error) ?? error;
}

function statusOf(error: unknown): number {
  if (error instanceof NestboxError) return STATUS_OF_KIND[error.kind];
  const status = (error as FastifyError | undefined)?.statusCode;
  return typeof status === 'number' && status >= 400 && status < 600 ? status : 500;
}

function clientMessage(error: unknown, status: number): string {
  if (error instanceof NestboxError) return error.message;
  const fastifyError = error as FastifyError;
  if (fastifyError?.code === 'FST_ERR_CTP_INVALID_MEDIA_TYPE') return 'Unsupported Content-Type for this endpoint';
  if (status < 500 && fastifyError?.message) return fastifyError.message;
  return 'Internal error; the server log has the details';
}

function contextOf(error: unknown): Record<string, unknown> | undefined {
  return error instanceof NestboxError ? error.context : undefined;
}
