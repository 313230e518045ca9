import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { mustRun, runCommand } from './command.js';

/**
 * The machine's disk: the guest root as the read-only lower layer of an overlay whose upper layer lives
 * on a size-limited tmpfs. Whatever the sample writes lands in the upper directory (new and changed
 * files, whiteouts for deletions) and cannot exceed the tmpfs size, so the host disk is never touched.
 * Both mounts are named `nestbox-machine-<id>` so that leftovers of a crash can be found in mountinfo.
 */
export const MOUNT_PREFIX = 'nestbox-machine-';

export class MachineDisk {
  constructor(
    /** The machine's run folder, e.g. /run/nestbox/machines/<id>. */
    readonly dir: string,
    readonly machineId: string,
  ) {}

  get tmpfs(): string {
    return join(this.dir, 'rw');
  }
  get upper(): string {
    return join(this.tmpfs, 'upper');
  }
  get work(): string {
    return join(this.tmpfs, 'work');
  }
  /** The merged root the sandbox binds as `/`. */
  get root(): string {
    return join(this.dir, 'root');
  }
  get source(): string {
    return `${MOUNT_PREFIX}${this.machineId}`;
  }

  /**
   * Mounts a fresh disk; with `restoreFrom` (a tar of an earlier machine's upper layer) the disk starts
   * from that machine's end state. One shell does every step: spawning is most of the cost.
   */
  async mount(lower: string, sizeBytes: number, restoreFrom?: string): Promise<void> {
    const script = [
      'set -e',
      'mkdir -p "$DIR/rw" "$DIR/root"',
      'mount -t tmpfs -o "size=$SIZE,mode=0755,nosuid,nodev" "$SOURCE" "$DIR/rw"',
      'mkdir "$DIR/rw/upper" "$DIR/rw/work"',
      `if [ -n "$RESTORE" ]; then tar -x -f "$RESTORE" -C "$DIR/rw/upper" --numeric-owner --xattrs --xattrs-include='trusted.overlay.*'; fi`,
      'mount -t overlay -o "lowerdir=$LOWER,upperdir=$DIR/rw/upper,workdir=$DIR/rw/work,nosuid" "$SOURCE" "$DIR/root"',
    ].join('\n');
    await mustRun(['sh', '-c', script], 'mounting the machine disk', {
      env: { PATH: process.env.PATH ?? '/usr/sbin:/usr/bin:/sbin:/bin', DIR: this.dir, SIZE: String(sizeBytes), SOURCE: this.source, LOWER: lower, RESTORE: restoreFrom ?? '' },
    });
  }

  /** Detaches both mounts (lazily, so a straggler cannot block cleanup); safe to call more than once. */
  async unmount(): Promise<void> {
    const mounted = mountPointsOf(this.source);
    if (mounted.length === 0) return;
    await runCommand(['umount', '--lazy', ...mounted.reverse()]);
  }
}

/** Mount points whose source is `source`, in mount order. */
export function mountPointsOf(source: string): string[] {
  return mountsWhere((mountSource) => mountSource === source);
}

/** Mount points whose source matches, in mount order. */
export function mountsWhere(match: (source: string) => boolean): string[] {
  const points: string[] = [];
  for (const line of readFileSync('/proc/self/mountinfo', 'utf8').split('\n')) {
    const [left, right] = line.split(' - ');
    if (!left || !right) continue;
    const source = right.split(' ')[1] ?? '';
    if (match(source)) points.push(left.split(' ')[4]!.replace(/\\040/g, ' '));
  }
  return points;
}
