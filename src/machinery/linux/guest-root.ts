import { createHash } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdir, readFile, rename, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { Logger } from 'pino';
import { isNestboxError, NestboxError } from '../../errors.js';
import { mustRun } from '../host/command.js';
import { lockFile } from '../host/file-lock.js';
import { GUEST_INIT_REAL_PATH } from './guest-init.js';
import { machineIdRange } from './host-ids.js';
import { shiftOwnership } from './shift-ownership.js';
import type { LinuxSettings } from './settings.js';

/** Bump when the build steps change in a way the package list does not show. */
const BUILD_REVISION = 1;
const SUITE = 'bookworm';

/**
 * What a sample expects on a Linux machine: shells and interpreters, download tools, process tools,
 * archive tools for the archive package, a virtual display (Xvfb, and xwd to grab it from inside a
 * sandbox) and strace for the fallback tracer.
 */
const BASE_PACKAGES = [
  'bash', 'busybox', 'python3', 'perl', 'nodejs', 'curl', 'wget', 'ca-certificates', 'procps', 'psmisc',
  'iproute2', 'netcat-openbsd', 'file', 'p7zip-full', 'unzip', 'xz-utils', 'bzip2', 'strace',
  'xvfb', 'x11-utils', 'x11-apps', 'fonts-dejavu-core',
];
/** URL tasks: about 130 MiB to download and 460 MiB installed. */
const BROWSER_PACKAGES = ['chromium'];

export interface GuestRootPlan {
  version: string;
  packages: string[];
  path: string;
}

export function guestRootPlan(settings: Pick<LinuxSettings, 'guest_root_dir' | 'browser' | 'host_id_base'>): GuestRootPlan {
  const packages = [...BASE_PACKAGES, ...(settings.browser ? BROWSER_PACKAGES : [])];
  // Files are owned in the machine's host id range: another range is another guest root.
  const version = createHash('sha256')
    .update(JSON.stringify({ BUILD_REVISION, SUITE, packages, hostIdBase: settings.host_id_base }))
    .digest('hex')
    .slice(0, 16);
  return { version, packages, path: join(settings.guest_root_dir, version) };
}

/**
 * Returns the guest root for these settings, building it first when it is not there yet: a Debian
 * minbase from debootstrap plus the packages above, its files then owned by the machine's host ids
 * (root's files by the range's base), so that root inside the machine owns them. Building happens in a temporary
 * folder renamed into place when complete, under a lock, so concurrent callers wait for one build and a
 * crashed build leaves nothing that looks usable. Downloaded packages are cached beside it.
 */
export async function ensureGuestRoot(settings: LinuxSettings, log: Logger): Promise<string> {
  const plan = guestRootPlan(settings);
  if (existsSync(plan.path)) return plan.path;
  await mkdir(settings.guest_root_dir, { recursive: true });
  const lock = await lockFile(join(settings.guest_root_dir, '.lock'));
  try {
    if (existsSync(plan.path)) return plan.path;
    await buildGuestRoot(plan, settings, log);
    return plan.path;
  } finally {
    await lock.release();
  }
}

async function buildGuestRoot(plan: GuestRootPlan, settings: LinuxSettings, log: Logger): Promise<void> {
  const building = `${plan.path}.building`;
  const caches = { debootstrap: join(settings.guest_root_dir, 'cache', 'debootstrap'), apt: join(settings.guest_root_dir, 'cache', 'apt') };
  await rm(building, { recursive: true, force: true });
  await mkdir(caches.debootstrap, { recursive: true });
  await mkdir(caches.apt, { recursive: true });
  const started = Date.now();
  log.info({ path: plan.path, packages: plan.packages }, 'building the guest root (first use; takes a few minutes)');
  try {
    await debootstrap(building, caches.debootstrap, settings.mirror);
    await installPackages(building, caches.apt, plan.packages);
    await finishRoot(building);
    await shiftOwnership(building, machineIdRange(settings.host_id_base));
    await rename(building, plan.path);
  } catch (error) {
    await rm(building, { recursive: true, force: true });
    if (isNestboxError(error)) throw error;
    throw new NestboxError('unavailable', `cannot build the guest root: ${(error as Error).message}`, {
      cause: error,
      context: { path: plan.path },
    });
  }
  log.info({ path: plan.path, seconds: Math.round((Date.now() - started) / 1000) }, 'guest root ready');
}

/** debootstrap runs in a private mount namespace, so a failed run cannot leave its /proc mounts behind. */
async function debootstrap(target: string, cache: string, mirror: string): Promise<void> {
  await mustRun(
    ['unshare', '--mount', '--', 'debootstrap', '--variant=minbase', `--cache-dir=${cache}`, SUITE, target, mirror],
    'debootstrap',
  );
}

/**
 * Writes a file of the guest root from the host. Packages install links (e.g. /sbin/init ->
 * /lib/systemd/systemd) that are absolute: followed from the host they lead into the host's own
 * filesystem, so whatever is at the path is removed first and the file is created anew, never followed.
 */
async function writeRootFile(root: string, path: string, content: string | Buffer, mode = 0o644): Promise<void> {
  const target = join(root, path);
  await rm(target, { force: true });
  await writeFile(target, content, { mode, flag: 'wx' });
}

async function installPackages(root: string, cache: string, packages: string[]): Promise<void> {
  await writeRootFile(root, 'etc/resolv.conf', await readFile('/etc/resolv.conf'));
  // No daemon may start inside the build chroot.
  await writeRootFile(root, 'usr/sbin/policy-rc.d', '#!/bin/sh\nexit 101\n', 0o755);
  const inChroot = (command: string) => `chroot "$ROOT" /usr/bin/env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin DEBIAN_FRONTEND=noninteractive ${command}`;
  const script = [
    'set -e',
    'mount -t proc proc "$ROOT/proc"',
    'mount --bind "$CACHE" "$ROOT/var/cache/apt/archives"',
    inChroot('apt-get update -qq'),
    inChroot(`apt-get install -y -qq --no-install-recommends ${packages.join(' ')}`),
    // Cleaned inside the chroot, where the guest's links lead to the guest's files, never the host's
    // (the package cache is bound in and kept for the next build).
    inChroot('sh -c "rm -rf /var/cache/apt/*.bin /var/lib/apt/lists/* /usr/share/doc/* /usr/share/man/* /usr/share/info/* /usr/sbin/policy-rc.d"'),
  ].join('\n');
  await mustRun(['unshare', '--mount', '--pid', '--fork', '--', 'sh', '-c', script], 'installing the guest packages', {
    env: { ...process.env, ROOT: root, CACHE: cache },
  });
}

/** Leaves the files the sandbox binds over per task. */
async function finishRoot(root: string): Promise<void> {
  await writeRootFile(root, 'etc/resolv.conf', 'nameserver 127.0.0.1\n');
  await writeRootFile(root, 'etc/hostname', 'localhost\n');
  // /sbin is a link to usr/sbin in Debian: the placeholder the init is bound over is written at its real place.
  await writeRootFile(root, GUEST_INIT_REAL_PATH.slice(1), '', 0o755);
  await writeRootFile(root, 'etc/hosts', '127.0.0.1\tlocalhost\n::1\tlocalhost ip6-localhost ip6-loopback\n');
}
