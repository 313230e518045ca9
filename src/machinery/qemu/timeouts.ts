import { setTimeout as sleep } from 'node:timers/promises';

/** `promise`'s value, or 'timeout' when it takes longer than `ms`; the timer never outlives the race. */
export async function withTimeout<T>(promise: Promise<T>, ms: number): Promise<T | 'timeout'> {
  const timer = new AbortController();
  try {
    return await Promise.race([promise, sleep(ms, 'timeout' as const, { signal: timer.signal })]);
  } finally {
    timer.abort();
  }
}
