import { createHash } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdir, rename, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { Logger } from 'pino';
import { isNestboxError, NestboxError } from '../../errors.js';
import { WINDOWS_COMPUTER_NAME } from '../../report/windows-paths.js';
import { mustRun } from '../host/command.js';
import { lockFile } from '../host/file-lock.js';
import { machineIdRange } from './host-ids.js';
import { shiftOwnership } from './shift-ownership.js';
import type { LinuxSettings } from './settings.js';
import { prefixRegistry, prefixScript, wineEnvironment } from './wine-prefix.js';
import { relaySettings } from './wine-relay.js';

/** Bump when the build steps change in a way the package list and prefix do not show. */
const BUILD_REVISION = 1;

/**
 * Wine from Debian, 64- and 32-bit (the i386 architecture is added to the guest's dpkg), with the X
 * libraries its display driver loads and its fonts, so that windows draw with text on the machine's display.
 * About 300 MiB to download; the rest of Wine's recommendations (sound, GPU, printing) are left out.
 */
const X_LIBRARIES = ['libxcursor1', 'libxfixes3', 'libxi6', 'libxrandr2', 'libxrender1', 'libxinerama1', 'libxcomposite1', 'libgnutls30'];
const WINE_PACKAGES = ['wine', 'wine64', 'wine32:i386', 'fonts-wine', ...X_LIBRARIES, ...X_LIBRARIES.map((name) => `${name}:i386`)];

export interface WineLayerPlan {
  version: string;
  path: string;
}

/**
 * The Wine layer: an overlay layer over the guest root (its upper directory after Wine was installed and
 * the prefix prepared on top of it). Only machines that run a Windows program mount it, so building it
 * is on no other task's way; another guest root, package list or prefix is another layer.
 */
export function wineLayerPlan(guestRoot: string, settings: Pick<LinuxSettings, 'guest_root_dir'>): WineLayerPlan {
  const version = createHash('sha256')
    .update(JSON.stringify({ BUILD_REVISION, guestRoot, WINE_PACKAGES, registry: prefixRegistry(relaySettings()), script: prefixScript() }))
    .digest('hex')
    .slice(0, 16);
  return { version, path: join(settings.guest_root_dir, `wine-${version}`) };
}

/** Returns the Wine layer for this guest root, building it first when it is not there (under a lock, like the guest root). */
export async function ensureWineLayer(guestRoot: string, settings: LinuxSettings, log: Logger): Promise<string> {
  const plan = wineLayerPlan(guestRoot, settings);
  if (existsSync(plan.path)) return plan.path;
  const lock = await lockFile(join(settings.guest_root_dir, '.wine-lock'));
  try {
    if (existsSync(plan.path)) return plan.path;
    await buildWineLayer(plan, guestRoot, settings, log);
    return plan.path;
  } finally {
    await lock.release();
  }
}

async function buildWineLayer(plan: WineLayerPlan, guestRoot: string, settings: LinuxSettings, log: Logger): Promise<void> {
  const building = `${plan.path}.building`;
  const cache = join(settings.guest_root_dir, 'cache', 'apt');
  await rm(building, { recursive: true, force: true });
  for (const dir of ['upper', 'work', 'merged']) await mkdir(join(building, dir), { recursive: true });
  await mkdir(cache, { recursive: true });
  await writeFile(join(building, 'prefix.reg'), prefixRegistry(relaySettings()));
  const started = Date.now();
  log.info({ path: plan.path }, 'building the Wine layer (first Windows sample; takes a few minutes)');
  try {
    await installWine(building, guestRoot, cache);
    await shiftOwnership(join(building, 'upper'), machineIdRange(settings.host_id_base));
    await rename(join(building, 'upper'), plan.path);
    await rm(building, { recursive: true, force: true });
  } catch (error) {
    await rm(building, { recursive: true, force: true });
    if (isNestboxError(error)) throw error;
    throw new NestboxError('unavailable', `cannot build the Wine layer: ${(error as Error).message}`, { cause: error, context: { path: plan.path } });
  }
  log.info({ path: plan.path, seconds: Math.round((Date.now() - started) / 1000) }, 'Wine layer ready');
}

/**
 * One private mount namespace (so nothing is left mounted if it fails) holds the overlay being built on
 * the guest root, with the host's /dev and name resolution bound in and a scratch /tmp (wineserver's
 * socket) that never reaches the layer. Its own uts namespace gives Wine's first boot the machine's
 * Windows computer name.
 */
async function installWine(building: string, guestRoot: string, cache: string): Promise<void> {
  const env = Object.entries({ ...wineEnvironment(), WINEDEBUG: '-all', REGFILE: '/tmp/prefix.reg' })
    .map(([name, value]) => `${name}='${value}'`)
    .join(' ');
  const inChroot = (command: string) => `chroot "$M" /usr/bin/env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin DEBIAN_FRONTEND=noninteractive ${command}`;
  const script = [
    'set -e',
    'M="$B/merged"',
    'mount -t overlay -o "lowerdir=$ROOT,upperdir=$B/upper,workdir=$B/work" overlay "$M"',
    'mount -t proc proc "$M/proc"',
    'mount --rbind /dev "$M/dev"',
    'mount -t tmpfs tmpfs "$M/tmp"',
    'mount --bind /etc/resolv.conf "$M/etc/resolv.conf"',
    'mount --bind "$CACHE" "$M/var/cache/apt/archives"',
    'cp "$B/prefix.reg" "$M/tmp/prefix.reg"',
    `hostname ${WINDOWS_COMPUTER_NAME}`,
    inChroot('dpkg --add-architecture i386'),
    inChroot('apt-get update -qq'),
    inChroot(`apt-get install -y -qq --no-install-recommends ${WINE_PACKAGES.join(' ')}`),
    inChroot('sh -c "rm -rf /var/cache/apt/*.bin /var/lib/apt/lists/* /usr/share/doc/* /usr/share/man/* /usr/share/info/*"'),
    `chroot "$M" /usr/bin/env -i PATH=/usr/lib/wine:/usr/bin:/bin ${env} sh -c "$PREFIX_SCRIPT"`,
  ].join('\n');
  await mustRun(['unshare', '--mount', '--uts', '--pid', '--fork', '--', 'sh', '-c', script], 'installing Wine', {
    env: { ...process.env, ROOT: guestRoot, B: building, CACHE: cache, PREFIX_SCRIPT: prefixScript() },
  });
}
