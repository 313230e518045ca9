/** JSON array columns (tags, options) are written and read only through these two helpers. */
export function encodeList(values: readonly string[]): string {
  return JSON.stringify(values);
}

export function decodeList(text: string | null): string[] {
  if (!text) return [];
  const value: unknown = JSON.parse(text);
  return Array.isArray(value) ? value.map(String) : [];
}
