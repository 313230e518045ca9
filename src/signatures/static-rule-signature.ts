import type { Report, SignatureMatch, YaraMatch } from '../report/report-types.js';
import { runsSampleFile } from '../db/schema.js';
import { techniquesOf } from './attack.js';
import { Signature, type Severity, type SignatureContext } from './signature.js';

/**
 * Static capability rules are data: YARA rules (rules/yara/, or the operator's <home>/yara/) whose meta names
 * the report signature they feed (`signature`), their own `severity` (1-5) and ATT&CK techniques (`attack`,
 * comma-separated). A rule signature of this kind reports the sample's rules that feed it.
 */

/** The YARA matches of the sample itself: its target entry, else the top-level `yara` section. */
export function sampleRuleMatches(report: Report): readonly YaraMatch[] {
  const target = runsSampleFile(report.target.category) ? report.target.file?.yara : undefined;
  return target ?? report.yara ?? [];
}

/** The matched rules that feed the signature `name`. */
export function rulesFeeding(matches: readonly YaraMatch[], name: string): YaraMatch[] {
  return matches.filter((match) => match.meta.signature === name);
}

/** The severity a rule claims, never above what its signature allows (`ceiling`); the ceiling when it claims none. */
export function ruleSeverity(rule: YaraMatch, ceiling: Severity): Severity {
  const claimed = Number(rule.meta.severity);
  if (!Number.isInteger(claimed) || claimed < 1) return ceiling;
  return Math.min(claimed, ceiling) as Severity;
}

/** The strongest severity of the rules; undefined without rules. */
function strongestSeverity(rules: readonly YaraMatch[], ceiling: Severity): Severity | undefined {
  if (rules.length === 0) return undefined;
  return Math.max(...rules.map((rule) => ruleSeverity(rule, ceiling))) as Severity;
}

/** A rule's ATT&CK technique ids; `fallback` when it has no `attack` meta at all (an empty one means none). */
export function ruleTechniques(rule: YaraMatch, fallback: readonly string[]): string[] {
  const attack = rule.meta.attack;
  if (attack === undefined) return [...fallback];
  return attack
    .split(',')
    .map((id) => id.trim())
    .filter((id) => id !== '');
}

/**
 * A signature fed by static capability rules. It matches when at least one of the sample's matched rules names
 * it; each such rule is a mark. Its techniques are the rules': a sample that only carries SHA-256 constants is
 * not reported as using an encrypted channel because AES would be.
 *
 * A capability has a `strength`, the most its rules may claim (an operator's rule cannot lift it). The match's
 * severity is the strongest rule's, but never above `info.severity`: what a program can do, read from its
 * imports and strings, is at most suspicious on its own; static_capability_combination weighs capabilities
 * together by their strength and makes the verdict.
 */
export abstract class StaticRuleSignature extends Signature<never> {
  abstract readonly strength: Severity;
  #rules: YaraMatch[] = [];

  /** How strong the sample's rules for this capability are; undefined when none matched. */
  strengthIn(report: Report): Severity | undefined {
    return strongestSeverity(rulesFeeding(sampleRuleMatches(report), this.info.name), this.strength);
  }

  override onComplete(ctx: SignatureContext): void {
    this.#rules = rulesFeeding(sampleRuleMatches(ctx.report), this.info.name);
    for (const rule of this.#rules) this.markIoc('yara', rule.name, rule.meta.description ?? null);
  }

  override result(): SignatureMatch {
    const match = super.result();
    const techniques = new Set(this.#rules.flatMap((rule) => ruleTechniques(rule, this.info.ttp)));
    const strongest = strongestSeverity(this.#rules, this.strength) ?? this.info.severity;
    return { ...match, severity: Math.min(strongest, this.info.severity) as Severity, ttp: techniquesOf([...techniques]) };
  }
}
