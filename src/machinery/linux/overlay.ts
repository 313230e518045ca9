import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { mustRun, runCommand } from '../host/command.js';

/**
 * The machine's disk: the guest root as the read-only lower layer of an overlay whose upper layer lives
 * on a size-limited tmpfs. Whatever the sample writes lands in the upper directory (new and changed
 * files, whiteouts for deletions) and cannot exceed the tmpfs size, so the host disk is never touched.
 *
 * The overlay is mounted with paths relative to the machine's run folder: the sample sees its root's
 * mount options in /proc/mounts, and they should not spell out where on the host it runs.
 */
export class MachineDisk {
  constructor(
    /** The machine's run folder, e.g. /run/nestbox/machines/<id>. */
    readonly dir: string,
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
  /**
   * The read-only layers alone, merged (only mounted when there are several, e.g. Wine's over the guest
   * root): what the machine held before the sample, for the supervisor to tell stock files from the sample's.
   */
  get lowerView(): string {
    return join(this.dir, 'lowers');
  }

  /**
   * Mounts a fresh disk on the read-only `lowers` (topmost first: a Wine layer, then the guest root); with `restoreFrom` (a tar of an earlier machine's upper layer) the disk starts
   * from that machine's end state. The upper layer's top folder, which is the machine's `/`, belongs to
   * `rootId` (the host id of the machine's root), as the guest root's files do. One shell does every
   * step: spawning is most of the cost.
   */
  async mount(lowers: string[], sizeBytes: number, rootId: number, restoreFrom?: string): Promise<void> {
    // Each layer is named by a link in the run folder (lower, lower1, ...), topmost first.
    const names = lowers.map((_, index) => (index === lowers.length - 1 ? 'lower' : `lower${lowers.length - 1 - index}`));
    const script = [
      'set -e',
      'cd "$DIR"',
      'mkdir -p rw root',
      ...names.map((name, index) => `ln -sfn "$LAYER${index}" ${name}`),
      'mount -t tmpfs -o "size=$SIZE,mode=0755,nosuid,nodev" tmpfs rw',
      'mkdir rw/upper rw/work',
      'chown "$ROOT_ID:$ROOT_ID" rw/upper',
      `if [ -n "$RESTORE" ]; then tar -x -f "$RESTORE" -C rw/upper --numeric-owner --xattrs --xattrs-include='trusted.overlay.*'; fi`,
      `mount -t overlay -o "lowerdir=${names.join(':')},upperdir=rw/upper,workdir=rw/work,nosuid" overlay root`,
      ...(lowers.length > 1 ? ['mkdir -p lowers', `mount -t overlay -o "lowerdir=${names.join(':')}" overlay lowers`] : []),
    ].join('\n');
    await mustRun(['sh', '-c', script], 'mounting the machine disk', {
      env: { PATH: process.env.PATH ?? '/usr/sbin:/usr/bin:/sbin:/bin', DIR: this.dir, SIZE: String(sizeBytes), ROOT_ID: String(rootId), RESTORE: restoreFrom ?? '', ...Object.fromEntries(lowers.map((layer, index) => [`LAYER${index}`, layer])) },
    });
  }

  /** Detaches its mounts (lazily, so a straggler cannot block cleanup); safe to call more than once. */
  async unmount(): Promise<void> {
    const ours = new Set([this.root, this.tmpfs, this.lowerView]);
    const mounted = readMounts()
      .map((mount) => mount.point)
      .filter((point) => ours.has(point));
    if (mounted.length === 0) return;
    await runCommand(['umount', '--lazy', ...mounted.reverse()]);
  }
}

interface MountLine {
  point: string;
  fsType: string;
}

function readMounts(): MountLine[] {
  const mounts: MountLine[] = [];
  for (const line of readFileSync('/proc/self/mountinfo', 'utf8').split('\n')) {
    const [left, right] = line.split(' - ');
    if (!left || !right) continue;
    mounts.push({ point: left.split(' ')[4]!.replace(/\\040/g, ' '), fsType: right.split(' ')[0] ?? '' });
  }
  return mounts;
}

/** Run folders of machine disks still mounted (with their machine ids), for stale cleanup. */
export function mountedMachineDisks(isMachineId: (name: string) => boolean): Map<string, string> {
  const disks = new Map<string, string>();
  for (const { point, fsType } of readMounts()) {
    const match = /^(.*\/([^/]+))\/(?:rw|root|lowers)$/.exec(point);
    if (match && (fsType === 'tmpfs' || fsType === 'overlay') && isMachineId(match[2]!)) disks.set(match[2]!, match[1]!);
  }
  return disks;
}
