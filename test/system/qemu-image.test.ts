import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { after, before, describe, it } from 'node:test';
import { pino } from 'pino';
import { compressionOf, decompress } from '../../src/machinery/qemu/decompress.js';
import { buildImage, DEFAULT_RECIPE } from '../../src/machinery/qemu/image-builder.js';
import { findImage, type GuestImage } from '../../src/machinery/qemu/image-store.js';
import { INITRAMFS_MODULES, moduleLoadOrder } from '../../src/machinery/qemu/initramfs.js';
import { uncompressedKernel } from '../../src/machinery/qemu/kernel.js';

/**
 * The guest image's building blocks, on the real Debian kernel package the image build downloaded (the
 * image is built once per machine into /var/lib/nestbox/images; the first build takes minutes).
 */
const IMAGES_DIR = '/var/lib/nestbox/images';
const log = pino({ level: process.env.NESTBOX_TEST_LOG ?? 'silent' });
const scratch = mkdtempSync(join(tmpdir(), 'nestbox-qemu-image-'));
let image: GuestImage;
let kernelTree: string;

/** ELF notes of type XEN_ELFNOTE_PHYS32_ENTRY (18) make a kernel bootable through PVH. */
function hasPvhNote(elf: Buffer): boolean {
  const notes = elf.subarray(0, Math.min(elf.length, 64 * 1024 * 1024));
  for (let at = notes.indexOf('Xen\0'); at >= 0; at = notes.indexOf('Xen\0', at + 1)) {
    // Note header before the name: namesz (4), descsz (4), type (4).
    if (at >= 12 && notes.readUInt32LE(at - 12) === 4 && notes.readUInt32LE(at - 4) === 18) return true;
  }
  return false;
}

describe('qemu guest image', { timeout: 30 * 60_000 }, () => {
  before(async () => {
    image = await buildImage({ imagesDir: IMAGES_DIR, log });
    const deb = readdirSync(join(IMAGES_DIR, 'cache')).find((name) => /^linux-image-.*-amd64_.*\.deb$/.test(name) && !name.startsWith('linux-image-amd64_'));
    assert.ok(deb, 'the kernel package is cached');
    kernelTree = join(scratch, 'kernel');
    execFileSync('dpkg-deb', ['--extract', join(IMAGES_DIR, 'cache', deb), kernelTree]);
  });

  after(() => rmSync(scratch, { recursive: true, force: true }));

  it('unpacks the compressed Debian kernel into the ELF kernel QEMU boots through PVH', async () => {
    const bzImage = readdirSync(join(kernelTree, 'boot')).find((name) => name.startsWith('vmlinuz-'))!;
    const elf = await uncompressedKernel(readFileSync(join(kernelTree, 'boot', bzImage)));
    assert.equal(elf.toString('latin1', 0, 4), '\x7fELF');
    assert.ok(hasPvhNote(elf), 'the kernel has its PVH entry note');
    assert.deepEqual(elf.subarray(0, 4096), readFileSync(image.kernel).subarray(0, 4096), 'the image holds that kernel');
    await assert.rejects(uncompressedKernel(Buffer.alloc(4096)), /not a bzImage/);
  });

  it('loads kernel modules after the modules they depend on', async () => {
    const release = readdirSync(join(kernelTree, 'lib/modules'))[0]!;
    const order = (await moduleLoadOrder(join(kernelTree, 'lib/modules', release), INITRAMFS_MODULES)).map((module) => module.name);
    const before = (first: string, second: string) => assert.ok(order.indexOf(first) >= 0 && order.indexOf(first) < order.indexOf(second), `${first} before ${second}`);
    before('virtio_ring', 'virtio_blk');
    before('virtio', 'virtio_pci');
    before('jbd2', 'ext4');
    before('mbcache', 'ext4');
    before('drm', 'bochs');
    assert.equal(new Set(order).size, order.length, 'each module once');
    const initrdList = execFileSync('cpio', ['--list', '--quiet', `--file=${image.initrd}`], { encoding: 'utf8' });
    for (const name of order) assert.ok(initrdList.includes(`lib/modules/${name}.ko`), `${name} is in the initramfs`);
  });

  it('finds a built image only for its own recipe', async () => {
    assert.equal((await findImage(IMAGES_DIR, DEFAULT_RECIPE))?.dir, image.dir);
    assert.equal(await findImage(IMAGES_DIR, { ...DEFAULT_RECIPE, packages: [...DEFAULT_RECIPE.packages, 'gdb'] }), null);
    assert.equal(image.manifest.recipe.suite, 'bookworm');
  });

  it('decompresses what Debian compresses, and refuses what it does not know', async () => {
    const data = Buffer.from('kernel payload '.repeat(100));
    assert.equal(compressionOf(gzipSync(data)), 'gzip');
    assert.deepEqual(await decompress(Buffer.concat([gzipSync(data), Buffer.from([1, 2, 3, 4])]), 'test'), data);
    writeFileSync(join(scratch, 'named'), data);
    const named = execFileSync('gzip', ['--stdout', '--name', join(scratch, 'named')]);
    assert.ok(named[3]! & 8, 'gzip recorded the file name in the header');
    assert.deepEqual(await decompress(Buffer.concat([named, Buffer.from([9, 9, 9, 9])]), 'test'), data);
    const xz = execFileSync('xz', ['--stdout'], { input: data });
    assert.equal(compressionOf(xz), 'xz');
    assert.deepEqual(await decompress(Buffer.concat([xz, Buffer.from([0, 0, 0, 7])]), 'test'), data);
    await assert.rejects(decompress(Buffer.from('plain'), 'test'), /unknown compression/);
  });
});
