/** Two lists compared as sets of keys: what both have, and what only one side has. Pure, for tests. */
export interface SetDiff<T> {
  same: T[];
  onlyLeft: T[];
  onlyRight: T[];
}

/**
 * Items keyed by `keyOf`; each key counts once, with its first item. The three lists are sorted by
 * key, so a diff reads the same whatever order the reports listed things in.
 */
export function diffSets<T>(left: readonly T[], right: readonly T[], keyOf: (item: T) => string): SetDiff<T> {
  const leftByKey = byKey(left, keyOf);
  const rightByKey = byKey(right, keyOf);
  const diff: SetDiff<T> = { same: [], onlyLeft: [], onlyRight: [] };
  for (const key of [...leftByKey.keys()].sort()) {
    (rightByKey.has(key) ? diff.same : diff.onlyLeft).push(leftByKey.get(key)!);
  }
  for (const key of [...rightByKey.keys()].sort()) if (!leftByKey.has(key)) diff.onlyRight.push(rightByKey.get(key)!);
  return diff;
}

function byKey<T>(items: readonly T[], keyOf: (item: T) => string): Map<string, T> {
  const map = new Map<string, T>();
  for (const item of items) {
    const key = keyOf(item);
    if (!map.has(key)) map.set(key, item);
  }
  return map;
}
