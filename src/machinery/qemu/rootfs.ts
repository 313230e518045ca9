import { existsSync } from 'node:fs';
import { createHash } from 'node:crypto';
import { chmod, copyFile, mkdir, rename, rm, symlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { mustRun } from '../host/command.js';
import { guestFile } from './guest-files.js';

/**
 * The guest's root file system: a Debian minbase with the interpreters samples expect, nestbox's agent
 * and tracer (the image builder adds nestbox's monitor), and busybox init
 * (no service manager: the guest is ready seconds after the kernel starts, even under TCG). Written into an ext4 image and converted to the qcow2 base image.
 */
export interface RootfsRecipe {
  suite: string;
  mirror: string;
  packages: string[];
}

/**
 * What the analysis packages run (src/analysis/packages: python3, perl, bash, nodejs, 7-Zip with xz and
 * bzip2, file to pick an archive's file, curl where there is no browser), the libraries of nestbox's
 * monitor (libbpf, libelf), busybox. No strace: the monitor traces, invisibly (the machine setting
 * extra_packages can add it for the analyzer's fallback).
 */
export const DEFAULT_GUEST_PACKAGES = [
  'python3', 'perl', 'bash', 'nodejs', 'p7zip-full', 'xz-utils', 'bzip2', 'file', 'libbpf1', 'libelf1', 'busybox', 'curl', 'iproute2', 'procps',
];
export const GUEST_HOSTNAME = 'workstation';
/** Free space left in the guest's file system for what samples write. */
const FREE_SPACE_BYTES = 1024 ** 3;

export async function buildRootfs(root: string, recipe: RootfsRecipe, cacheDir: string): Promise<void> {
  await debootstrapCached(root, recipe, cacheDir);
  await installNestboxFiles(root);
  await linkMissingBusyboxApplets(root);
}

/**
 * The Debian part of the root file system comes from a tarball cached per recipe, so that a change to
 * nestbox's own guest files rebuilds an image in seconds instead of a debootstrap's minute or more.
 */
async function debootstrapCached(root: string, recipe: RootfsRecipe, cacheDir: string): Promise<void> {
  const key = createHash('sha256').update(JSON.stringify([recipe.suite, recipe.mirror, [...recipe.packages].sort()])).digest('hex');
  const tarball = join(cacheDir, `debootstrap-${recipe.suite}-${key.slice(0, 12)}.tar`);
  await mkdir(root, { recursive: true });
  if (!existsSync(tarball)) {
    await mustRun(
      ['debootstrap', '--variant=minbase', `--include=${recipe.packages.join(',')}`, recipe.suite, root, recipe.mirror],
      `debootstrap of Debian ${recipe.suite}`,
    );
    await prune(root);
    await mkdir(cacheDir, { recursive: true });
    await mustRun(['tar', '--create', '--file', `${tarball}.partial`, '--numeric-owner', '-C', root, '.'], 'caching the Debian root');
    await rename(`${tarball}.partial`, tarball);
    return;
  }
  await mustRun(['tar', '--extract', '--file', tarball, '--numeric-owner', '--same-permissions', '-C', root], 'unpacking the cached Debian root');
}

/** Package caches, documentation and translations: a third of a minbase, useless to an analysis. */
async function prune(root: string): Promise<void> {
  for (const dir of ['var/cache/apt', 'var/lib/apt/lists', 'usr/share/doc', 'usr/share/man', 'usr/share/info', 'usr/share/locale']) {
    await rm(join(root, dir), { recursive: true, force: true });
    await mkdir(join(root, dir), { recursive: true });
  }
}

async function installNestboxFiles(root: string): Promise<void> {
  const lib = join(root, 'usr/lib/nestbox');
  await mkdir(lib, { recursive: true });
  await copyFile(guestFile('rootfs/init.sh'), join(lib, 'init.sh'));
  await chmod(join(lib, 'init.sh'), 0o755);
  await copyFile(guestFile('agent/agent.py'), join(lib, 'agent.py'));
  await copyFile(guestFile('tracer/tracer.py'), join(lib, 'tracer.py'));
  await copyFile(guestFile('rootfs/inittab'), join(root, 'etc/inittab'));
  await rm(join(root, 'sbin/init'), { force: true });
  await symlink('/bin/busybox', join(root, 'sbin/init'));
  await writeFile(join(root, 'etc/hostname'), `${GUEST_HOSTNAME}\n`);
  await writeFile(join(root, 'etc/hosts'), `127.0.0.1\tlocalhost\n127.0.1.1\t${GUEST_HOSTNAME}\n`);
  await writeFile(join(root, 'etc/resolv.conf'), '');
}

/** Busybox's tools that Debian did not install (wget, nc, tftp...), which Linux malware often calls. */
async function linkMissingBusyboxApplets(root: string): Promise<void> {
  const applets = await mustRun(['chroot', root, '/bin/busybox', '--list'], 'listing busybox applets');
  await mkdir(join(root, 'usr/local/bin'), { recursive: true });
  for (const name of applets.split('\n').filter(Boolean)) {
    if (name === 'init' || name === 'linuxrc') continue;
    if (['bin', 'sbin', 'usr/bin', 'usr/sbin'].some((dir) => existsSync(join(root, dir, name)))) continue;
    await symlink('/bin/busybox', join(root, 'usr/local/bin', name));
  }
}

/** An ext4 image of the folder (made without mounting anything), converted to a qcow2 base image. */
export async function makeDiskImage(root: string, output: string, scratch: string): Promise<void> {
  const used = Number((await mustRun(['du', '-sb', root], 'measuring the root file system')).split('\t')[0]);
  const sizeMiB = Math.ceil((used * 1.2 + FREE_SPACE_BYTES) / 1024 ** 2);
  await mustRun(['mkfs.ext4', '-q', '-F', '-L', 'nestbox-root', '-d', root, scratch, `${sizeMiB}M`], 'making the ext4 image');
  await mustRun(['qemu-img', 'convert', '-f', 'raw', '-O', 'qcow2', scratch, output], 'converting the disk image to qcow2');
  await rm(scratch, { force: true });
}
