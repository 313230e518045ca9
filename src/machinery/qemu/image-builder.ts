import { mkdir, rename, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { Logger } from 'pino';
import { lockFile } from '../host/file-lock.js';
import { findImage, GuestImage, imageDir, imageVersion, type ImageManifest, type ImageRecipe } from './image-store.js';
import { buildInitramfs } from './initramfs.js';
import { installGuestMonitor } from './guest-monitor.js';
import { installGuestSupervisor } from './guest-supervisor.js';
import { fetchDebianKernel } from './kernel.js';
import { buildRootfs, DEFAULT_GUEST_PACKAGES, makeDiskImage } from './rootfs.js';

/**
 * Builds the guest image of a recipe from Debian packages, once: kernel, initramfs and root disk go into
 * a scratch folder that is renamed into place only when complete, under a lock shared with every other
 * nestbox process, so a crash or a concurrent build never leaves a half-made image in use.
 */
export const DEFAULT_RECIPE: ImageRecipe = {
  name: 'debian-bookworm',
  suite: 'bookworm',
  mirror: 'http://deb.debian.org/debian',
  packages: DEFAULT_GUEST_PACKAGES,
  kernelPackage: 'linux-image-amd64',
};

export interface BuildImageOptions {
  imagesDir: string;
  recipe?: ImageRecipe;
  log: Logger;
}

export async function buildImage({ imagesDir, recipe = DEFAULT_RECIPE, log }: BuildImageOptions): Promise<GuestImage> {
  const existing = await findImage(imagesDir, recipe);
  if (existing) return existing;
  await mkdir(imagesDir, { recursive: true });
  const lock = await lockFile(join(imagesDir, '.build.lock'));
  try {
    return (await findImage(imagesDir, recipe)) ?? (await buildLocked(imagesDir, recipe, log));
  } finally {
    await lock.release();
  }
}

async function buildLocked(imagesDir: string, recipe: ImageRecipe, log: Logger): Promise<GuestImage> {
  const started = Date.now();
  const version = await imageVersion(recipe);
  const target = imageDir(imagesDir, recipe, version);
  const work = `${target}.building`;
  await rm(work, { recursive: true, force: true });
  await mkdir(work, { recursive: true });
  try {
    log.info({ recipe: recipe.name, version }, 'building guest image: kernel');
    const kernel = await fetchDebianKernel(work, join(imagesDir, 'cache'), recipe.kernelPackage);
    await buildInitramfs(work, kernel, join(work, 'initrd.cpio'));
    log.info({ recipe: recipe.name, version }, 'building guest image: root file system (the first debootstrap takes minutes)');
    const root = join(work, 'root');
    await buildRootfs(root, recipe, join(imagesDir, 'cache'));
    await installGuestMonitor(root);
    await installGuestSupervisor(root, join(imagesDir, 'cache', 'native'));
    await makeDiskImage(root, join(work, 'base.qcow2'), join(work, 'root.ext4'));
    for (const scratch of ['root', 'debs', 'kernel-package', 'busybox-package', 'initramfs', 'root.ext4']) {
      await rm(join(work, scratch), { recursive: true, force: true });
    }
    const manifest: ImageManifest = {
      name: recipe.name,
      version,
      kernelRelease: kernel.release,
      recipe,
      builtAt: new Date().toISOString(),
      buildSeconds: Math.round((Date.now() - started) / 1000),
    };
    await writeFile(join(work, 'manifest.json'), `${JSON.stringify(manifest, null, 2)}\n`);
    await rm(target, { recursive: true, force: true });
    await rename(work, target);
    log.info({ recipe: recipe.name, version, seconds: manifest.buildSeconds }, 'guest image built');
    return new GuestImage(target, manifest);
  } catch (error) {
    await rm(work, { recursive: true, force: true });
    throw error;
  }
}
