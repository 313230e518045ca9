/** Display forms of numbers and times shown on several pages. */

const UNITS = ['B', 'KiB', 'MiB', 'GiB', 'TiB'];

export function formatBytes(bytes: number | null | undefined): string {
  if (bytes === null || bytes === undefined || !Number.isFinite(bytes)) return '–';
  let value = bytes;
  let unit = 0;
  while (value >= 1024 && unit < UNITS.length - 1) {
    value /= 1024;
    unit += 1;
  }
  return `${unit === 0 ? value : value.toFixed(1)} ${UNITS[unit]}`;
}

/** An ISO time or Cuckoo's `YYYY-MM-DD HH:MM:SS` (UTC), shown as `YYYY-MM-DD HH:MM:SS` UTC. */
export function formatTime(text: string | null | undefined): string {
  if (!text) return '–';
  const time = Date.parse(/^\d{4}-\d{2}-\d{2} \d/.test(text) ? `${text.replace(' ', 'T')}Z` : text);
  if (Number.isNaN(time)) return text;
  return new Date(time).toISOString().slice(0, 19).replace('T', ' ');
}

export function formatScore(score: number | null | undefined): string {
  return score === null || score === undefined ? '–' : score.toFixed(1);
}
