import { setTimeout as sleep } from 'node:timers/promises';
import type { Logger } from 'pino';
import { isNestboxError, NestboxError } from '../../errors.js';

export interface RetryPolicy {
  /** Tries in all, the first included. */
  attempts: number;
  /** Wait before the first retry; each further retry waits twice as long. */
  backoffMs: number;
  log: Logger;
}

/**
 * Runs `attempt` until it succeeds, it fails for good, or the attempts are used up; each retry is
 * logged. A failure is for good when the main node answered that asking again cannot help (see
 * remoteFailure); a network failure, a cut-off answer or a server error is tried again.
 */
export async function withRetries<T>(what: string, policy: RetryPolicy, attempt: (number: number) => Promise<T>): Promise<T> {
  for (let number = 1; ; number++) {
    try {
      return await attempt(number);
    } catch (error) {
      if (number >= policy.attempts || isFinal(error)) throw error;
      const waitMs = policy.backoffMs * 2 ** (number - 1);
      policy.log.warn({ err: error, attempt: number, of: policy.attempts, waitMs }, `${what} failed; retrying`);
      await sleep(waitMs);
    }
  }
}

/** Answers that another try would get again: authentication, a missing task, a stale task, a limit. */
const FINAL_STATUSES = new Set([401, 403, 404, 409, 413]);

const KIND_OF_STATUS: Record<number, NestboxError['kind']> = {
  401: 'unauthorized',
  403: 'forbidden',
  404: 'not_found',
  409: 'conflict',
  413: 'too_large',
};

/** The main node's error answer as an error of this node, with the status it gave. */
export function remoteFailure(what: string, status: number, message: string): NestboxError {
  return new NestboxError(KIND_OF_STATUS[status] ?? 'unavailable', `${what}: the main node answered ${status}: ${message}`, {
    context: { status },
  });
}

function isFinal(error: unknown): boolean {
  return isNestboxError(error) && FINAL_STATUSES.has(error.context.status as number);
}
