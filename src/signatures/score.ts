import type { SignatureMatch } from '../report/report-types.js';

/**
 * What one match of each severity adds to the score. Each level counts double the one below, so a single
 * critical match (6.4) outweighs any number of informational ones.
 */
const WEIGHT: Record<number, number> = { 1: 0.2, 2: 0.8, 3: 1.6, 4: 3.2, 5: 6.4 };

/** Informational matches together add at most this much: benign programs trip several of them. */
const INFORMATIONAL_CAP = 0.6;

/**
 * `info.score`, 0 to 10 with one decimal: the sum of the matched signatures' weights by severity
 * (1: 0.2, 2: 0.8, 3: 1.6, 4: 3.2, 5: 6.4; severity 1 adding at most 0.6 in all), capped at 10.
 * Cuckoo adds severities and divides by 5 with no cap; nestbox weighs severity more steeply so that a
 * benign program with a few informational matches stays below 1 while one reverse shell alone scores 6.4.
 */
export function scoreOf(matches: readonly Pick<SignatureMatch, 'severity'>[]): number {
  let informational = 0;
  let rest = 0;
  for (const { severity } of matches) {
    const level = Math.min(5, Math.max(1, Math.round(severity)));
    if (level === 1) informational += WEIGHT[1] ?? 0;
    else rest += WEIGHT[level] ?? 0;
  }
  const total = Math.min(INFORMATIONAL_CAP, informational) + rest;
  return Math.min(10, Math.round(total * 10) / 10);
}
