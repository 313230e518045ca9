import { SIGNATURES } from '../../src/signatures/index.js';
import type { CorpusLabel } from './corpus.js';

/**
 * Judges a corpus run against its labels: what each sample got right or wrong, per-signature precision
 * and recall, and the aims. Names a label uses that the signature registry does not have (yet) are
 * set aside as unknown, never counted as misses, so labels can name signatures being written elsewhere.
 */
export const MALICIOUS_SCORE = 5;
export const BENIGN_SCORE = 1;
export const RECALL_AIM = 0.95;
/** No benign control may fire a signature this severe. */
export const BENIGN_SEVERITY_LIMIT = 3;

export interface RunResult {
  id: string;
  label: CorpusLabel;
  /** The analysis ended with a report. */
  reported: boolean;
  score: number;
  signatures: ReadonlyArray<{ name: string; severity: number }>;
}

export interface SampleJudgement {
  id: string;
  verdict: CorpusLabel['verdict'];
  score: number;
  /** Known must_fire names that did not fire. */
  missing: string[];
  /** must_not_fire names that fired. */
  unwanted: string[];
  /** Label names the registry does not know. */
  unknown: string[];
  /** Whether the score is on the labelled side (malicious >= 5, benign <= 1). */
  scoreOk: boolean;
  /**
   * Whether the score can be held to its threshold on this build: a benign control always, a malicious
   * sample only when every signature its label requires exists.
   */
  scoreJudged: boolean;
}

export interface SignatureStats {
  name: string;
  /** Fired where its label requires it. */
  truePositives: string[];
  /** Fired on a benign control, or where its label forbids it. */
  falsePositives: string[];
  /** Required by a label and did not fire. */
  falseNegatives: string[];
  /** Fired on a malicious sample whose label does not mention it. */
  unlabelled: string[];
  precision: number | null;
  recall: number | null;
}

export interface Evaluation {
  samples: SampleJudgement[];
  signatures: SignatureStats[];
  /** Label names not in the registry -> the samples naming them. */
  unknownSignatures: Map<string, string[]>;
  /** Samples whose analysis did not end in a report. */
  unreported: string[];
  scores: { malicious: number[]; benign: number[] };
  /** Malicious samples scoring >= 5, over all malicious samples. */
  recall: number;
  /** Benign controls scoring <= 1, over all benign controls. */
  benignClean: number;
  /** Signatures fired on benign controls -> the controls, with the severity. */
  benignFires: Map<string, { severity: number; samples: string[] }>;
  aims: { everyMaliciousAtLeast5: boolean; everyBenignAtMost1: boolean; recallAtLeast95: boolean; noSevereOnBenign: boolean };
}

export function evaluate(results: readonly RunResult[], registry: ReadonlySet<string>): Evaluation {
  const fired = (result: RunResult) => new Set(result.signatures.map((signature) => signature.name));
  // A name seen firing exists, even if registered somewhere this build does not list.
  const known = new Set([...registry, ...results.flatMap((result) => [...fired(result)])]);
  const unknownSignatures = new Map<string, string[]>();
  const samples = results.map((result) => judgeSample(result, fired(result), known, unknownSignatures));
  const signatures = signatureStats(results, fired, known);
  const malicious = results.filter((result) => result.label.verdict === 'malicious');
  const benign = results.filter((result) => result.label.verdict === 'benign');
  const benignFires = new Map<string, { severity: number; samples: string[] }>();
  for (const result of benign) {
    for (const { name, severity } of result.signatures) {
      const entry = benignFires.get(name) ?? { severity, samples: [] };
      entry.samples.push(result.id);
      benignFires.set(name, entry);
    }
  }
  const recall = ratio(malicious.filter((result) => result.score >= MALICIOUS_SCORE).length, malicious.length);
  const benignClean = ratio(benign.filter((result) => result.score <= BENIGN_SCORE).length, benign.length);
  return {
    samples,
    signatures,
    unknownSignatures,
    unreported: results.filter((result) => !result.reported).map((result) => result.id),
    scores: { malicious: malicious.map((result) => result.score), benign: benign.map((result) => result.score) },
    recall,
    benignClean,
    benignFires,
    aims: {
      everyMaliciousAtLeast5: malicious.every((result) => result.score >= MALICIOUS_SCORE),
      everyBenignAtMost1: benign.every((result) => result.score <= BENIGN_SCORE),
      recallAtLeast95: recall >= RECALL_AIM,
      noSevereOnBenign: [...benignFires.values()].every((entry) => entry.severity < BENIGN_SEVERITY_LIMIT),
    },
  };
}

function judgeSample(result: RunResult, fired: Set<string>, known: Set<string>, unknownSignatures: Map<string, string[]>): SampleJudgement {
  const { label } = result;
  const unknown = [...label.must_fire, ...label.must_not_fire].filter((name) => !known.has(name));
  for (const name of unknown) unknownSignatures.set(name, [...(unknownSignatures.get(name) ?? []), result.id]);
  const malicious = label.verdict === 'malicious';
  return {
    id: result.id,
    verdict: label.verdict,
    score: result.score,
    missing: label.must_fire.filter((name) => known.has(name) && !fired.has(name)),
    unwanted: label.must_not_fire.filter((name) => fired.has(name)),
    unknown,
    scoreOk: malicious ? result.score >= MALICIOUS_SCORE : result.score <= BENIGN_SCORE,
    scoreJudged: !malicious || label.must_fire.every((name) => known.has(name)),
  };
}

function signatureStats(results: readonly RunResult[], fired: (result: RunResult) => Set<string>, known: Set<string>): SignatureStats[] {
  const names = new Set<string>();
  for (const result of results) {
    for (const name of [...result.label.must_fire, ...fired(result)]) if (known.has(name)) names.add(name);
  }
  return [...names].sort().map((name) => {
    const stats: SignatureStats = { name, truePositives: [], falsePositives: [], falseNegatives: [], unlabelled: [], precision: null, recall: null };
    for (const result of results) {
      const hit = fired(result).has(name);
      const required = result.label.must_fire.includes(name);
      if (required) (hit ? stats.truePositives : stats.falseNegatives).push(result.id);
      else if (hit && (result.label.verdict === 'benign' || result.label.must_not_fire.includes(name))) stats.falsePositives.push(result.id);
      else if (hit) stats.unlabelled.push(result.id);
    }
    const tp = stats.truePositives.length;
    stats.precision = tp + stats.falsePositives.length > 0 ? tp / (tp + stats.falsePositives.length) : null;
    stats.recall = tp + stats.falseNegatives.length > 0 ? tp / (tp + stats.falseNegatives.length) : null;
    return stats;
  });
}

function ratio(part: number, whole: number): number {
  return whole === 0 ? 1 : part / whole;
}

/** The names of every signature this build registers, with their severities. */
export function registeredSignatures(): Map<string, number> {
  return new Map(SIGNATURES.map((Signature) => new Signature().info).map((info) => [info.name, info.severity]));
}
