import { existsSync } from 'node:fs';
import { mkdir, readFile, rename, rm, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { AnalysisPaths } from '../../storage/layout.js';
import { mustRun } from '../host/command.js';
import type { ColdBoot } from './machine-args.js';

/**
 * The end state of a QEMU task, kept for reboot tasks: the task's disk overlay (everything the guest
 * wrote, over the image's ready disk) in the analysis folder as reboot/disk.qcow2, and beside it what a
 * cold boot of that disk needs (the kernel and initrd of the image the disk belongs to). A reboot task
 * boots a new overlay of it, so the kept state stays as the original task left it.
 */
export interface KeptDisk {
  disk: string;
  /** The files the disk stands on, nearest first: the image's ready disk, or an earlier kept state and what it stands on. */
  chain: string[];
  /** nestbox's kernel and initrd, or null for an operator's image booted through its firmware. */
  boot: ColdBoot | null;
}

/** What a disk overlay stands on and boots with, noted beside a kept state. */
export type DiskOrigin = Omit<KeptDisk, 'disk'>;

export function rebootDiskPath(paths: AnalysisPaths): string {
  return join(paths.dir, 'reboot', 'disk.qcow2');
}

function notePath(paths: AnalysisPaths): string {
  return join(paths.dir, 'reboot', 'qemu.json');
}

/**
 * Copies the overlay into the analysis folder (holes stay holes); returns a warning instead when the
 * space it takes is over `maxBytes`.
 */
export async function keepRebootDisk(overlay: string, paths: AnalysisPaths, note: DiskOrigin, maxBytes: number): Promise<string | undefined> {
  const info = await stat(overlay);
  const used = Math.min(info.size, info.blocks * 512);
  if (used > maxBytes) return `end state not kept for reboot tasks: ${used} bytes is over the ${maxBytes}-byte limit`;
  const target = rebootDiskPath(paths);
  await mkdir(join(paths.dir, 'reboot'), { recursive: true });
  await mustRun(['cp', '--sparse=always', overlay, `${target}.partial`], 'keeping the end state');
  await rename(`${target}.partial`, target);
  await writeFile(notePath(paths), `${JSON.stringify(note)}\n`);
  return undefined;
}

/**
 * The end state an earlier task kept, or why there is none to boot: nothing was kept, or the image it
 * stands on is gone (rebuilt and pruned since).
 */
export async function keptRebootDisk(paths: AnalysisPaths): Promise<KeptDisk | { missing: string }> {
  const disk = rebootDiskPath(paths);
  if (!existsSync(disk) || !existsSync(notePath(paths))) return { missing: 'the original task kept no end state' };
  const note = JSON.parse(await readFile(notePath(paths), 'utf8')) as DiskOrigin;
  const needed = [...note.chain, ...(note.boot ? [note.boot.kernel, note.boot.initrd] : [])];
  const gone = needed.find((path) => !existsSync(path));
  if (gone) return { missing: `what the original task's end state stands on is gone (${gone})` };
  return { disk, ...note };
}

/** Removes a partly kept state, so a failed copy never looks like a state to boot. */
export async function dropRebootDisk(paths: AnalysisPaths): Promise<void> {
  await rm(join(paths.dir, 'reboot'), { recursive: true, force: true });
}
