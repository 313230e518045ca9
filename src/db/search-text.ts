/**
 * How a searchable value is stored and how a query is matched against it, the same for SQLite and
 * PostgreSQL: `norm` (the value lowercased and cut to MAX_NORM characters) answers exact and prefix
 * matches from a B-tree; `terms` (its words: runs of letters and digits, lowercased) answers word and
 * word-prefix matches from the full-text index. Splitting words here rather than in each database's
 * tokenizer makes both agree: PostgreSQL's parser would keep `evil.example.com` or `/tmp/x.sh` as one
 * token, so `example` would not find the domain.
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

/** The `terms` column: a value's words separated by spaces. */
export function termsOf(value: string): string {
  return wordsOf(value).join(' ');
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
