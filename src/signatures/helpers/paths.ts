/** Path helpers for paths as the sample saw them (POSIX, absolute when the tracer could resolve them). */

export function basename(path: string): string {
  const trimmed = path.endsWith('/') ? path.slice(0, -1) : path;
  return trimmed.slice(trimmed.lastIndexOf('/') + 1);
}

export function dirname(path: string): string {
  const index = path.lastIndexOf('/');
  return index <= 0 ? (index === 0 ? '/' : '.') : path.slice(0, index);
}

/**
 * Whether two paths name the same file. Relative paths (the tracer could not resolve the working directory)
 * are compared by file name, which is the best the log allows.
 */
export function samePath(a: string, b: string): boolean {
  if (a === '' || b === '') return false;
  if (a === b) return true;
  if (a.startsWith('/') && b.startsWith('/')) return normalize(a) === normalize(b);
  return basename(a) === basename(b);
}

/** An absolute path with `.`, `..` and repeated slashes resolved. */
export function normalize(path: string): string {
  const parts: string[] = [];
  for (const part of path.split('/')) {
    if (part === '' || part === '.') continue;
    if (part === '..') parts.pop();
    else parts.push(part);
  }
  return '/' + parts.join('/');
}

/** Folders every user can write to, where droppers stage payloads. */
export const WORLD_WRITABLE_DIRS = /^\/(tmp|var\/tmp|dev\/shm|run\/shm|run\/lock|var\/lock)\//;
