/**
 * How searchable values are stored and how a query is matched against them, the same for SQLite and
 * PostgreSQL. A value's `norm` (lowercased, cut to MAX_NORM characters) answers exact and prefix
 * matches from a B-tree. Its words (runs of letters and digits, lowercased) answer word matches: the
 * words of all values of a field of a task make one full-text document. Splitting words here rather
 * than in each database's tokenizer makes both agree: PostgreSQL's parser would keep
 * `evil.example.com` or `/tmp/x.sh` as one token, so `example` would not find the domain.
 */

/** Longest query accepted, and so the length of `norm` that exact and prefix matches compare. */
export const MAX_QUERY = 512;
const MAX_NORM = MAX_QUERY;
/** Longer words are cut: PostgreSQL ignores lexemes over 2 KiB, and nobody types one. */
const MAX_WORD = 200;
/** Words kept per value: a command line with a script inline is searchable by its start. */
const MAX_WORDS = 400;
/** A prefix shorter than this would match most of the index; shorter queries match whole values and words. */
export const MIN_PREFIX = 3;

export type MatchKind = 'exact' | 'prefix' | 'words';

export function normOf(value: string): string {
  return value.toLowerCase().slice(0, MAX_NORM);
}

export function wordsOf(value: string): string[] {
  return value
    .toLowerCase()
    .split(/[^\p{L}\p{N}]+/u)
    .filter((word) => word !== '')
    .slice(0, MAX_WORDS)
    .map((word) => word.slice(0, MAX_WORD));
}

/** The full-text document of some values: their distinct words, separated by spaces. */
export function termsOf(values: readonly string[]): string {
  return [...new Set(values.flatMap(wordsOf))].join(' ');
}

/**
 * A query made ready for the index: `norm` for exact matches, `upper` the end of the prefix range
 * (undefined when the query is too short for a prefix), and its words, of which the last matches as a
 * prefix (`lastIsPrefix`) when long enough.
 */
export interface PreparedQuery {
  norm: string;
  upper: string | undefined;
  words: string[];
  lastIsPrefix: boolean;
}

/** Above every character, so [norm, norm + TOP) holds exactly the strings starting with norm. */
const TOP = '\u{10FFFF}';

export function prepareQuery(query: string): PreparedQuery {
  const norm = normOf(query.trim());
  const words = wordsOf(norm);
  return {
    norm,
    upper: norm.length >= MIN_PREFIX ? norm + TOP : undefined,
    words,
    lastIsPrefix: (words.at(-1)?.length ?? 0) >= MIN_PREFIX,
  };
}

/**
 * How one value matches the query, as the indexes match it: the whole value, its start, or all the
 * query's words among its words; `some-words` when it holds only some of them (the field's other
 * values hold the rest); undefined when it does not match.
 */
export function matchOf(value: string, query: PreparedQuery): MatchKind | 'some-words' | undefined {
  const norm = normOf(value);
  if (norm === query.norm) return 'exact';
  if (query.upper !== undefined && norm.startsWith(query.norm)) return 'prefix';
  const words = new Set(wordsOf(value));
  const found = query.words.filter((word, index) =>
    index === query.words.length - 1 && query.lastIsPrefix ? [...words].some((candidate) => candidate.startsWith(word)) : words.has(word),
  );
  if (found.length === 0) return undefined;
  return found.length === query.words.length ? 'words' : 'some-words';
}
