import { createHash } from 'node:crypto';
import { existsSync } from 'node:fs';
import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { guestFilesDigest, IMAGE_GUEST_FILES } from './guest-files.js';
import { monitorSourcesDigest } from '../host/tracer/monitor-build.js';
import { guestSupervisorDigest } from './guest-supervisor.js';
import { INITRAMFS_MODULES } from './initramfs.js';
import type { RootfsRecipe } from './rootfs.js';

/**
 * Where built guest images live (outside the clone, e.g. /var/lib/nestbox/images), one folder per
 * recipe version:
 *   <name>-<version>/vmlinux, initrd.cpio, base.qcow2, manifest.json    the image
 *   <name>-<version>/ready-<hw>.qcow2, state-<hw>.bin                   the booted machine, per hardware
 *   <name>-<version>/overlay-<hw>.qcow2                                 an empty overlay copied per task
 * The version hashes the recipe, the guest files and modules baked in, the sources of nestbox's monitor
 * and supervisor (with init, its hand-off) and the builder's own version (raise it when the build itself
 * changes), so any change builds a new image beside the old one.
 */
export const IMAGE_BUILDER_VERSION = 2;

export interface ImageRecipe extends RootfsRecipe {
  name: string;
  kernelPackage: string;
}

export interface ImageManifest {
  name: string;
  version: string;
  kernelRelease: string;
  recipe: ImageRecipe;
  builtAt: string;
  buildSeconds: number;
}

export interface ReadyStateFiles {
  key: string;
  /** The disk as it was when the memory was saved: the backing file of every task's overlay. */
  disk: string;
  stateFile: string;
  overlayTemplate: string;
}

export class GuestImage {
  constructor(
    readonly dir: string,
    readonly manifest: ImageManifest,
  ) {}

  get kernel() { return join(this.dir, 'vmlinux'); }
  get initrd() { return join(this.dir, 'initrd.cpio'); }
  get baseDisk() { return join(this.dir, 'base.qcow2'); }

  readyState(key: string): ReadyStateFiles {
    return {
      key,
      disk: join(this.dir, `ready-${key}.qcow2`),
      stateFile: join(this.dir, `state-${key}.bin`),
      overlayTemplate: join(this.dir, `overlay-${key}.qcow2`),
    };
  }
}

export async function imageVersion(recipe: ImageRecipe): Promise<string> {
  const guest = await guestFilesDigest(IMAGE_GUEST_FILES);
  return createHash('sha256')
    .update(JSON.stringify({ recipe, guest, modules: INITRAMFS_MODULES, monitor: monitorSourcesDigest(), supervisor: guestSupervisorDigest(), builder: IMAGE_BUILDER_VERSION }))
    .digest('hex')
    .slice(0, 12);
}

export function imageDir(imagesDir: string, recipe: ImageRecipe, version: string): string {
  return join(imagesDir, `${recipe.name}-${version}`);
}

/** The built image for this recipe, or null when it has not been built (or its build did not finish). */
export async function findImage(imagesDir: string, recipe: ImageRecipe): Promise<GuestImage | null> {
  const dir = imageDir(imagesDir, recipe, await imageVersion(recipe));
  const manifestPath = join(dir, 'manifest.json');
  if (!existsSync(manifestPath)) return null;
  return new GuestImage(dir, JSON.parse(await readFile(manifestPath, 'utf8')) as ImageManifest);
}

/**
 * Other versions of the same image (older recipes or guest files) and interrupted builds: what
 * `nestbox image build --prune` removes. A nestbox still running tasks on one of them must be restarted.
 */
export async function otherVersions(imagesDir: string, current: GuestImage): Promise<string[]> {
  const prefix = `${current.manifest.name}-`;
  return (await readdir(imagesDir))
    .filter((entry) => entry.startsWith(prefix) && /^[0-9a-f]{12}(\.building)?$/.test(entry.slice(prefix.length)))
    .map((entry) => join(imagesDir, entry))
    .filter((dir) => dir !== current.dir);
}
