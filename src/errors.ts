/**
 * Every failure nestbox reports on purpose is a NestboxError. Its kind says what went wrong in domain
 * terms; `api/error-handler.ts` is the one place that maps kinds to HTTP statuses.
 */
export type ErrorKind =
  | 'invalid_input'
  | 'unauthorized'
  | 'forbidden'
  | 'not_found'
  | 'method_not_allowed'
  | 'conflict'
  | 'too_large'
  /** The request asked for something HTTP lets a server decline (an unknown `Expect`). */
  | 'expectation_failed'
  | 'headers_too_large'
  /** The client took too long to send its request. */
  | 'timed_out'
  | 'unavailable'
  /** Cuckoo's distributed API: the task's results are asked for before it has finished (its 420). */
  | 'not_finished'
  | 'invalid_config'
  | 'internal';

export interface ErrorOptions {
  cause?: unknown;
  /** Facts that help an operator: ids, paths, values. Logged, never sent to clients. */
  context?: Record<string, unknown>;
}

export class NestboxError extends Error {
  readonly context: Record<string, unknown>;

  constructor(
    readonly kind: ErrorKind,
    message: string,
    options: ErrorOptions = {},
  ) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = 'NestboxError';
    this.context = options.context ?? {};
  }
}

export const invalidInput = (message: string, options?: ErrorOptions) =>
  new NestboxError('invalid_input', message, options);
export const notFound = (message: string, options?: ErrorOptions) => new NestboxError('not_found', message, options);
export const conflict = (message: string, options?: ErrorOptions) => new NestboxError('conflict', message, options);
export const tooLarge = (message: string, options?: ErrorOptions) => new NestboxError('too_large', message, options);
export const forbidden = (message: string, options?: ErrorOptions) => new NestboxError('forbidden', message, options);
export const unavailable = (message: string, options?: ErrorOptions) =>
  new NestboxError('unavailable', message, options);
export const notFinished = (message: string, options?: ErrorOptions) =>
  new NestboxError('not_finished', message, options);
export const internal = (message: string, options?: ErrorOptions) => new NestboxError('internal', message, options);

export function isNestboxError(error: unknown, kind?: ErrorKind): error is NestboxError {
  return error instanceof NestboxError && (kind === undefined || error.kind === kind);
}
