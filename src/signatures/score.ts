import type { SignatureMatch } from '../report/report-types.js';

/**
 * What the strongest match alone makes of the score. Severity 3 is the first that benign software must
 * never reach (see signature.ts), so it is where the verdict turns: 5 and above reads as malicious.
 */
const STRONGEST: Record<number, number> = { 1: 0.1, 2: 0.5, 3: 5, 4: 6.5, 5: 8 };

/** What each further match adds: more evidence raises the score, but never turns the verdict alone. */
const FURTHER: Record<number, number> = { 1: 0.1, 2: 0.2, 3: 0.5, 4: 0.75, 5: 1 };

/** Informational matches together add at most this much: benign programs trip several of them. */
const INFORMATIONAL_CAP = 0.3;

/**
 * `info.score`, 0 to 10 with one decimal. The strongest match sets the level (severity 1: 0.1, 2: 0.5,
 * 3: 5, 4: 6.5, 5: 8) and every other match adds to it (1: 0.1, 2: 0.2, 3: 0.5, 4: 0.75, 5: 1), with
 * informational ones adding at most 0.3 in all; capped at 10.
 *
 * Cuckoo adds severities and divides by 5, so a sample scores by how many signatures it trips, and one
 * critical finding among none else scores low. nestbox scores by the strongest finding first: anything
 * of severity 3 or more (which no benign control in test/corpus trips) is 5 or above, while a benign
 * program with a suspicious match or two and some informational ones stays at 1 or below.
 */
export function scoreOf(matches: readonly Pick<SignatureMatch, 'severity'>[]): number {
  const levels = matches.map(({ severity }) => Math.min(5, Math.max(1, Math.round(severity)))).sort((a, b) => b - a);
  if (levels.length === 0) return 0;
  const [strongest, ...rest] = levels as [number, ...number[]];
  let informational = strongest === 1 ? STRONGEST[1]! : 0;
  let total = strongest === 1 ? 0 : STRONGEST[strongest]!;
  for (const level of rest) {
    if (level === 1) informational += FURTHER[1]!;
    else total += FURTHER[level]!;
  }
  return Math.min(10, Math.round((total + Math.min(INFORMATIONAL_CAP, informational)) * 10) / 10);
}
