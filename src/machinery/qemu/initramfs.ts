import { chmod, copyFile, mkdir, readdir, readFile, writeFile } from 'node:fs/promises';
import { basename, join } from 'node:path';
import { internal } from '../../errors.js';
import { mustRun } from '../host/command.js';
import { downloadPackage, unpackPackage } from './debian-packages.js';
import { compressionOf, decompress } from './decompress.js';
import { guestFile } from './guest-files.js';
import type { GuestKernel } from './kernel.js';

/**
 * The guest's initramfs: a static busybox, the kernel modules needed to reach the root file system, the
 * guest's virtio devices and its display (bochs: the framebuffer console the screenshots show), and
 * `guest/initramfs/init`. It is stored uncompressed: decompressing it
 * would cost more under TCG than reading the few extra megabytes.
 */
export const INITRAMFS_MODULES = ['virtio_pci', 'virtio_blk', 'virtio_net', 'virtio_console', 'ext4', 'crc32c_generic', 'bochs'];

export async function buildInitramfs(workDir: string, kernel: GuestKernel, output: string): Promise<void> {
  const root = join(workDir, 'initramfs');
  for (const dir of ['bin', 'dev', 'proc', 'sys', 'newroot', 'lib/modules']) await mkdir(join(root, dir), { recursive: true });
  await installStaticBusybox(workDir, join(root, 'bin', 'busybox'));
  const order = await moduleLoadOrder(kernel.modulesDir, INITRAMFS_MODULES);
  for (const module of order) await writeFile(join(root, 'lib/modules', `${module.name}.ko`), await moduleBytes(module.path));
  await writeFile(join(root, 'lib/modules/load-order'), order.map((module) => `${module.name}.ko\n`).join(''));
  await copyFile(guestFile('initramfs/init'), join(root, 'init'));
  await chmod(join(root, 'init'), 0o755);
  await packCpio(root, output);
}

async function installStaticBusybox(workDir: string, target: string): Promise<void> {
  const debs = join(workDir, 'debs');
  const tree = join(workDir, 'busybox-package');
  await mkdir(debs, { recursive: true });
  await unpackPackage(await downloadPackage('busybox-static', debs), tree);
  await copyFile(join(tree, 'bin', 'busybox'), target);
  await chmod(target, 0o755);
}

/** newc archive of the folder, entries owned by root, as the kernel expects. */
async function packCpio(root: string, output: string): Promise<void> {
  const list = await mustRun(['find', '.', '-mindepth', '1'], 'listing the initramfs', { cwd: root });
  await mustRun(['cpio', '--create', '--format=newc', '--owner=0:0', '--quiet', `--file=${output}`], 'packing the initramfs', {
    cwd: root,
    input: list,
  });
}

export interface KernelModule {
  /** Canonical name: dashes as underscores, no extension. */
  name: string;
  path: string;
}

/**
 * The modules to load, dependencies first. Dependencies come from each module's own `.modinfo`
 * section (`depends=`), so no depmod run is needed. Modules built into the kernel are simply absent.
 */
export async function moduleLoadOrder(modulesDir: string, wanted: string[]): Promise<KernelModule[]> {
  const index = await indexModules(modulesDir);
  const order: KernelModule[] = [];
  const visiting = new Set<string>();
  const visit = async (name: string): Promise<void> => {
    if (order.some((module) => module.name === name) || visiting.has(name)) return;
    const path = index.get(name);
    if (!path) return; // built in
    visiting.add(name);
    for (const dependency of dependsOf(await moduleBytes(path))) await visit(dependency);
    order.push({ name, path });
  };
  for (const name of wanted) await visit(canonical(name));
  return order;
}

async function indexModules(modulesDir: string): Promise<Map<string, string>> {
  const files = (await readdir(join(modulesDir, 'kernel'), { recursive: true })) as string[];
  const index = new Map<string, string>();
  for (const file of files) {
    const match = /^(.+)\.ko(\.xz|\.zst|\.gz)?$/.exec(basename(file));
    if (match) index.set(canonical(match[1]!), join(modulesDir, 'kernel', file));
  }
  if (index.size === 0) throw internal(`no kernel modules under ${modulesDir}`, { context: { modulesDir } });
  return index;
}

async function moduleBytes(path: string): Promise<Buffer> {
  const data = await readFile(path);
  return compressionOf(data) ? decompress(data, path) : data;
}

function dependsOf(module: Buffer): string[] {
  const match = /\0depends=([^\0]*)\0/.exec(module.toString('latin1'));
  return match?.[1] ? match[1].split(',').filter(Boolean).map(canonical) : [];
}

function canonical(name: string): string {
  return name.replaceAll('-', '_');
}
