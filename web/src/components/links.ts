/**
 * Links the interface builds. Only numbers and encoded components go into an href: text from a report
 * or a sample never becomes a URL of its own (no `javascript:` links).
 */

export function analysisHref(id: number): string {
  return `/ui/analysis/${Math.trunc(Number(id))}`;
}

export function compareHref(left: number, right?: number): string {
  const query = new URLSearchParams({ left: String(Math.trunc(left)) });
  if (right !== undefined) query.set('right', String(Math.trunc(right)));
  return `/ui/compare?${query}`;
}

/** The same page with another query: filters in the URL, so that a view can be shared. */
export function withQuery(path: string, params: Record<string, string | undefined>): string {
  const query = new URLSearchParams();
  for (const [key, value] of Object.entries(params)) if (value !== undefined && value !== '') query.set(key, value);
  const text = query.toString();
  return text === '' ? path : `${path}?${text}`;
}
