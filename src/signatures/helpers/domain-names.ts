// Second-level labels under which registries sell names (example.co.uk): the label left of them is the
// registered one.
const GENERIC_SECOND_LEVEL = new Set(['co', 'com', 'net', 'org', 'gov', 'edu', 'ac', 'or', 'ne', 'go']);

/** The label a domain's owner chose: "x8kq2j" for www.x8kq2j.com and x8kq2j.co.uk. */
export function registeredLabel(domain: string): string {
  const labels = domain.toLowerCase().replace(/\.$/, '').split('.');
  if (labels.length < 2) return labels[0] ?? '';
  const last = labels.length - 1;
  const secondLevel = labels[last - 1] ?? '';
  const underGeneric = labels.length >= 3 && (labels[last] ?? '').length === 2 && GENERIC_SECOND_LEVEL.has(secondLevel);
  return (underGeneric ? labels[last - 2] : secondLevel) ?? '';
}

export interface LabelTraits {
  length: number;
  vowelRatio: number;
  longestConsonantRun: number;
  digitsAmongLetters: number;
  distinctRatio: number;
}

export function traitsOf(label: string): LabelTraits {
  const letters = label.replace(/[^a-z]/g, '');
  const vowels = letters.replace(/[^aeiouy]/g, '').length;
  const runs = label.match(/[bcdfghjklmnpqrstvwxz]+/g) ?? [];
  return {
    length: label.length,
    vowelRatio: letters.length === 0 ? 0 : vowels / letters.length,
    longestConsonantRun: Math.max(0, ...runs.map((run) => run.length)),
    digitsAmongLetters: (label.match(/[a-z][0-9]+(?=[a-z])/g) ?? []).length,
    distinctRatio: new Set(label).size / Math.max(1, label.length),
  };
}

/**
 * Whether a label looks machine-made rather than chosen by people: long, and at least two of: hardly any
 * vowels, a run of five or more consonants, digits scattered between letters, almost no repeated characters
 * (in 12 characters or more). Words people pick ("googleapis", "cloudfront", "microsoftonline") have vowels
 * and short consonant runs; brand mashups such as "supportxmr" trip one sign, not two.
 */
export function looksGenerated(label: string): boolean {
  if (label.length < 8 || label.startsWith('xn--')) return false;
  const traits = traitsOf(label);
  const signs = [
    traits.vowelRatio < 0.2,
    traits.longestConsonantRun >= 5,
    traits.digitsAmongLetters >= 2,
    traits.length >= 12 && traits.distinctRatio >= 0.8,
  ];
  return signs.filter(Boolean).length >= 2;
}
