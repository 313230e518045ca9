/**
 * The task `options` string: comma-separated `key=value` items, split on the first `=`, trimmed; items
 * without `=` are ignored and later keys win, exactly as Cuckoo parses it.
 */
export function parseOptions(text: string | null | undefined): Record<string, string> {
  const options: Record<string, string> = {};
  if (!text) return options;
  for (const item of text.split(',')) {
    const eq = item.indexOf('=');
    if (eq < 0) continue;
    const key = item.slice(0, eq).trim();
    if (key) options[key] = item.slice(eq + 1).trim();
  }
  return options;
}

/** The normalised form Cuckoo stores and report.json shows: keys sorted, `k=v` joined by commas. */
export function formatOptions(options: Record<string, string>): string {
  return Object.keys(options)
    .sort()
    .map((key) => `${key}=${options[key]}`)
    .join(',');
}
