import { existsSync } from 'node:fs';
import { copyFile, rename, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Logger } from 'pino';
import { internal } from '../../errors.js';
import { mustRun } from '../linux/command.js';
import { lockFile } from '../linux/file-lock.js';
import { GuestMachine } from './guest-machine.js';
import type { GuestImage, ReadyStateFiles } from './image-store.js';
import { hardwareKey, type Hardware } from './machine-args.js';
import { qemuVersion } from './qemu-process.js';

/**
 * The ready state of an image: the guest booted once until its agent answered, then its memory saved to
 * a file (QEMU migration to `exec:cat > file`) beside the disk as it was at that moment. Every task then
 * starts a new QEMU from that file on a throw-away overlay of that disk: a clean, running machine in a
 * fraction of a second, where a boot takes seconds (TCG) to tens of seconds.
 */
export const BOOT_TIMEOUT_MS = 300_000;
const MIGRATION_TIMEOUT_MS = 120_000;

export interface ReadyStateOptions {
  hardware: Hardware;
  /** Scratch run folder for the boot. */
  runDir: string;
  bootTimeoutMs?: number;
  log: Logger;
}

export async function ensureReadyState(image: GuestImage, options: ReadyStateOptions): Promise<ReadyStateFiles> {
  const files = image.readyState(hardwareKey(options.hardware, await qemuVersion()));
  if (isComplete(files)) return files;
  const lock = await lockFile(join(image.dir, '.state.lock'));
  try {
    if (!isComplete(files)) await saveReadyState(image, files, options);
    return files;
  } finally {
    await lock.release();
  }
}

function isComplete(files: ReadyStateFiles): boolean {
  return existsSync(files.stateFile) && existsSync(files.disk) && existsSync(files.overlayTemplate);
}

async function saveReadyState(image: GuestImage, files: ReadyStateFiles, options: ReadyStateOptions): Promise<void> {
  const { hardware, runDir, log } = options;
  const started = Date.now();
  await rm(files.overlayTemplate, { force: true });
  await createOverlay(image.baseDisk, files.disk);
  const machine = await GuestMachine.start({
    hardware,
    runDir,
    processName: 'nestbox-build',
    disk: files.disk,
    start: { boot: { kernel: image.kernel, initrd: image.initrd } },
  });
  try {
    const agent = await machine.agent.waitUntilReady(options.bootTimeoutMs ?? BOOT_TIMEOUT_MS);
    log.info({ image: image.manifest.name, key: files.key, bootMs: Date.now() - started, agent: agent.version }, 'guest booted; saving its memory');
    await saveMemory(machine, `${files.stateFile}.partial`);
    await rename(`${files.stateFile}.partial`, files.stateFile);
  } catch (error) {
    await rm(files.disk, { force: true });
    throw error;
  } finally {
    await machine.kill();
    await rm(`${files.stateFile}.partial`, { force: true });
    await rm(runDir, { recursive: true, force: true });
  }
  await createOverlay(files.disk, `${files.overlayTemplate}.partial`);
  await rename(`${files.overlayTemplate}.partial`, files.overlayTemplate);
  log.info({ image: image.manifest.name, key: files.key, seconds: Math.round((Date.now() - started) / 1000) }, 'guest ready state saved');
}

/**
 * Stops the guest and streams its whole state to `path`. Stopping first makes it one pass, with no
 * pages dirtied behind the copy; QEMU flushes the disk when the migration completes.
 */
async function saveMemory(machine: GuestMachine, path: string): Promise<void> {
  const { qmp } = machine.qemu;
  await qmp.execute('stop');
  await qmp.execute('migrate', { uri: `exec:cat > '${path.replaceAll("'", `'\\''`)}'` });
  const deadline = Date.now() + MIGRATION_TIMEOUT_MS;
  for (;;) {
    const info = await qmp.execute<{ status?: string; 'error-desc'?: string }>('query-migrate');
    if (info.status === 'completed') return;
    if (info.status === 'failed' || info.status === 'cancelled') {
      throw internal(`saving the guest's memory failed: ${info['error-desc'] ?? info.status}`, { context: { path } });
    }
    if (Date.now() > deadline) throw internal('saving the guest memory took too long', { context: { path } });
    await sleep(20);
  }
}

/** An empty qcow2 overlay whose reads fall through to `backing`. */
export async function createOverlay(backing: string, path: string): Promise<void> {
  await mustRun(['qemu-img', 'create', '-q', '-f', 'qcow2', '-F', 'qcow2', '-b', backing, path], 'creating a disk overlay');
}

/**
 * A task's own disk: a copy of the empty overlay template (a few hundred KiB), which is much faster than
 * running qemu-img for each task.
 */
export async function createTaskDisk(files: ReadyStateFiles, path: string): Promise<void> {
  await copyFile(files.overlayTemplate, path);
}
