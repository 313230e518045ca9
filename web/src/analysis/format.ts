/** How the analysis page writes numbers, sizes, times and severities. */

export function formatBytes(size: unknown): string {
  if (typeof size !== 'number' || !Number.isFinite(size)) return '—';
  if (size < 1024) return `${size} B`;
  const units = ['KiB', 'MiB', 'GiB', 'TiB'];
  let value = size / 1024;
  let unit = 0;
  while (value >= 1024 && unit < units.length - 1) {
    value /= 1024;
    unit++;
  }
  return `${value.toFixed(1)} ${units[unit]} (${size} B)`;
}

/** A Unix time (seconds) as UTC date and time with milliseconds. */
export function formatEpoch(seconds: unknown): string {
  if (typeof seconds !== 'number' || !Number.isFinite(seconds) || seconds <= 0) return '—';
  return new Date(seconds * 1000).toISOString().replace('T', ' ').replace('Z', ' UTC');
}

/** Seconds since `start`, for events within one analysis. */
export function formatOffset(seconds: number, start: number): string {
  return `+${(seconds - start).toFixed(3)} s`;
}

export function formatDuration(seconds: unknown): string {
  if (typeof seconds !== 'number' || !Number.isFinite(seconds) || seconds < 0) return '—';
  if (seconds < 60) return `${seconds} s`;
  return `${Math.floor(seconds / 60)} min ${Math.round(seconds % 60)} s`;
}

/** Any value as one line of text: strings as they are, the rest as JSON. */
export function asText(value: unknown): string {
  if (typeof value === 'string') return value;
  if (value === undefined) return '';
  return JSON.stringify(value) ?? String(value);
}

export type Level = 'benign' | 'low' | 'medium' | 'high';

/**
 * The score's verdict band, as src/signatures/score.ts builds the score: informational matches stay
 * below 0.5, a suspicious one makes 0.5, and anything of severity 3 or more makes 5 and above.
 */
export function scoreLevel(score: number): Level {
  if (score <= 0) return 'benign';
  if (score < 0.5) return 'low';
  if (score < 5) return 'medium';
  return 'high';
}

export const SCORE_WORDS: Record<Level, string> = {
  benign: 'nothing found',
  low: 'informational',
  medium: 'suspicious',
  high: 'malicious',
};

/** A signature's severity (src/signatures/signature.ts's scale, 1 to 5) as a level. */
export function severityLevel(severity: number): Level {
  if (severity <= 1) return 'low';
  if (severity === 2) return 'medium';
  return 'high';
}

const SEVERITY_WORDS: Record<number, string> = { 1: 'informational', 2: 'suspicious', 3: 'malicious', 4: 'clearly malicious', 5: 'critical' };

export function severityWord(severity: number): string {
  return SEVERITY_WORDS[Math.min(5, Math.max(1, Math.round(severity)))] ?? 'informational';
}
