/** At least this many events, */
const MIN_EVENTS = 4;
/** at least this far apart on average (seconds), */
const MIN_INTERVAL = 1;
/** with intervals varying by at most this fraction of their mean (malware adds some jitter). */
const MAX_JITTER = 0.25;

export interface Regularity {
  count: number;
  /** The mean time between two events, in seconds. */
  interval: number;
  /** The intervals' standard deviation as a fraction of their mean. */
  jitter: number;
}

/** Whether events at these times (seconds) repeat at a regular interval, as a program's timer makes them. */
export function regularity(times: readonly number[]): Regularity | null {
  if (times.length < MIN_EVENTS) return null;
  const sorted = [...times].sort((a, b) => a - b);
  const gaps = sorted.slice(1).map((time, index) => time - (sorted[index] ?? time));
  const mean = gaps.reduce((sum, gap) => sum + gap, 0) / gaps.length;
  if (mean < MIN_INTERVAL) return null;
  const jitter = Math.sqrt(gaps.reduce((sum, gap) => sum + (gap - mean) ** 2, 0) / gaps.length) / mean;
  return jitter <= MAX_JITTER ? { count: sorted.length, interval: mean, jitter } : null;
}
