/** Timestamps are stored as ISO-8601 UTC strings; the API shows them as Cuckoo does, `YYYY-MM-DD HH:MM:SS`. */
export function nowIso(): string {
  return new Date().toISOString();
}

export function formatCuckooDate(iso: string | null): string | null {
  if (iso === null) return null;
  return iso.slice(0, 19).replace('T', ' ');
}

/** Seconds since the epoch as a float, the form report.json uses. */
export function epochSeconds(iso: string | null): number | null {
  return iso === null ? null : Date.parse(iso) / 1000;
}
