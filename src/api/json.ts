/**
 * Cuckoo's API answers with Flask's `jsonify`: keys sorted at every level, two-space indent, Python 2
 * separators (so a line ending in a comma carries a trailing space), non-ASCII as \uXXXX and a final
 * newline; compact when the request says `X-Requested-With: XMLHttpRequest`. nestbox writes the same
 * bytes so that clients comparing output see no difference.
 */
export function cuckooJson(value: unknown, compact = false): string {
  const sorted = sortKeys(value);
  const text = compact ? JSON.stringify(sorted) : JSON.stringify(sorted, null, 2).replace(/,\n/g, ', \n');
  return escapeNonAscii(text ?? 'null') + '\n';
}

function sortKeys(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(sortKeys);
  if (value === null || typeof value !== 'object' || value instanceof Date) return value;
  const sorted: Record<string, unknown> = {};
  for (const key of Object.keys(value).sort()) {
    const item = (value as Record<string, unknown>)[key];
    if (item !== undefined) sorted[key] = sortKeys(item);
  }
  return sorted;
}

// Only string contents can hold non-ASCII characters, so escaping the whole text is safe.
function escapeNonAscii(text: string): string {
  return text.replace(/[\u0080-\uffff]/g, (char) => `\\u${char.charCodeAt(0).toString(16).padStart(4, '0')}`);
}
