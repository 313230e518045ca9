/**
 * What a search can be limited to, each a kind of value found in reports (report/search-entries.ts).
 * Add new fields at the end only: the index stores a field's position (db/search.ts, at most 32).
 */
export const SEARCH_FIELDS = [
  'sha256',
  'md5',
  'sha1',
  'ssdeep',
  'imphash',
  'filename',
  'domain',
  'ip',
  'url',
  'signature',
  'attack',
  'mutex',
  'cmdline',
] as const;

export type SearchField = (typeof SEARCH_FIELDS)[number];

export function isSearchField(value: string): value is SearchField {
  return (SEARCH_FIELDS as readonly string[]).includes(value);
}

/** One searchable value of an analysis. */
export interface SearchEntry {
  field: SearchField;
  value: string;
}
