import { readFileSync } from 'node:fs';
import { relative, resolve } from 'node:path';

/**
 * How deep a cgroup lies in the v2 hierarchy (its root is level 0): the monitor records the tasks whose
 * ancestor at that level is the armed cgroup, so that cgroups made below it are recorded too.
 */
export function cgroupLevel(cgroupV2Path: string): number {
  const path = resolve(cgroupV2Path);
  const mounts = readFileSync('/proc/self/mounts', 'utf8')
    .split('\n')
    .map((line) => line.split(' '))
    .filter((fields) => fields[2] === 'cgroup2')
    .map((fields) => fields[1]!)
    .filter((mount) => path === mount || path.startsWith(`${mount}/`))
    .sort((a, b) => b.length - a.length);
  const root = mounts[0];
  if (root === undefined) throw new Error(`${cgroupV2Path} is not in a cgroup v2 hierarchy`);
  const below = relative(root, path);
  return below === '' ? 0 : below.split('/').length;
}
