/** Cuckoo's distributed API answers under both /api and /api/v1 (cuckoo-compat §7.1). */
export function distributedPaths(path: string): string[] {
  return [`/api${path}`, `/api/v1${path}`];
}
