import { createWriteStream, existsSync } from 'node:fs';
import { createServer } from 'node:net';
import { pipeline } from 'node:stream/promises';
import { copyFile, rename, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Logger } from 'pino';
import { internal } from '../../errors.js';
import { mustRun } from '../host/command.js';
import { lockFile } from '../host/file-lock.js';
import { GuestMachine } from './guest-machine.js';
import type { GuestImage, ReadyStateFiles } from './image-store.js';
import { hardwareKey, type ColdBoot, type Hardware } from './machine-args.js';
import { qemuVersion } from './qemu-process.js';

/**
 * The ready state of an image: the guest booted once until its agent answered, then its memory saved to
 * a file (QEMU migration through a unix socket) beside the disk as it was at that moment. Every task then
 * starts a new QEMU from that file on a throw-away overlay of that disk: a clean, running machine in a
 * fraction of a second, where a boot takes seconds (TCG) to tens of seconds.
 */
export const BOOT_TIMEOUT_MS = 300_000;
const MIGRATION_TIMEOUT_MS = 120_000;

/** What a ready state is made from: a base disk, booted through nestbox's kernel or the disk's own firmware boot. */
export interface ReadySource {
  name: string;
  baseDisk: string;
  /** qemu-img's name of the base disk's format (qcow2, raw, vmdk...). */
  baseFormat: string;
  boot: ColdBoot | null;
  /** Where the state for a hardware key lives. */
  files(key: string): ReadyStateFiles;
  /** Held while a state is made, so concurrent nestbox processes make it once. */
  lockPath: string;
}

export function imageSource(image: GuestImage): ReadySource {
  return {
    name: image.manifest.name,
    baseDisk: image.baseDisk,
    baseFormat: 'qcow2',
    boot: { kernel: image.kernel, initrd: image.initrd },
    files: (key) => image.readyState(key),
    lockPath: join(image.dir, '.state.lock'),
  };
}

export interface ReadyStateOptions {
  hardware: Hardware;
  /** Scratch run folder for the boot. */
  runDir: string;
  bootTimeoutMs?: number;
  log: Logger;
}

export async function ensureReadyState(source: ReadySource, options: ReadyStateOptions): Promise<ReadyStateFiles> {
  const files = source.files(hardwareKey(options.hardware, await qemuVersion()));
  if (isComplete(files)) return files;
  const lock = await lockFile(source.lockPath);
  try {
    if (!isComplete(files)) await saveReadyState(source, files, options);
    return files;
  } finally {
    await lock.release();
  }
}

function isComplete(files: ReadyStateFiles): boolean {
  return existsSync(files.stateFile) && existsSync(files.disk) && existsSync(files.overlayTemplate);
}

async function saveReadyState(source: ReadySource, files: ReadyStateFiles, options: ReadyStateOptions): Promise<void> {
  const { hardware, runDir, log } = options;
  const started = Date.now();
  await rm(files.overlayTemplate, { force: true });
  await createOverlay(source.baseDisk, files.disk, source.baseFormat);
  let machine: GuestMachine | undefined;
  try {
    machine = await GuestMachine.start({ hardware, runDir, processName: 'nestbox-build', disk: files.disk, start: { boot: source.boot } });
    const agent = await machine.agent.waitUntilReady(options.bootTimeoutMs ?? BOOT_TIMEOUT_MS);
    log.info({ image: source.name, key: files.key, bootMs: Date.now() - started, agent: agent.version }, 'guest booted; saving its memory');
    await saveMemory(machine, `${files.stateFile}.partial`);
    await rename(`${files.stateFile}.partial`, files.stateFile);
  } catch (error) {
    await machine?.kill();
    await rm(files.disk, { force: true });
    throw error;
  } finally {
    await machine?.kill();
    await rm(`${files.stateFile}.partial`, { force: true });
    await rm(runDir, { recursive: true, force: true });
  }
  await createOverlay(files.disk, `${files.overlayTemplate}.partial`);
  await rename(`${files.overlayTemplate}.partial`, files.overlayTemplate);
  log.info({ image: source.name, key: files.key, seconds: Math.round((Date.now() - started) / 1000) }, 'guest ready state saved');
}

/**
 * Stops the guest and streams its whole state to `path`. Stopping first makes it one pass, with no
 * pages dirtied behind the copy; QEMU flushes the disk when the migration completes.
 */
async function saveMemory(machine: GuestMachine, path: string): Promise<void> {
  const { qmp } = machine.qemu;
  const receiver = await receiveStream(join(machine.runDir, 'migrate.sock'), path);
  try {
    await qmp.execute('stop');
    await qmp.execute('migrate', { uri: `unix:${receiver.socket}` });
    await waitForMigration(machine, path);
    await receiver.written;
  } finally {
    receiver.close();
  }
}

/**
 * A one-connection unix socket whose stream is written to `path`. QEMU's sandbox forbids it to start
 * a program, so the state cannot go through `exec:cat`.
 */
async function receiveStream(socket: string, path: string): Promise<{ socket: string; written: Promise<void>; close(): void }> {
  await rm(socket, { force: true });
  let settle!: { resolve(): void; reject(error: Error): void };
  const written = new Promise<void>((resolve, reject) => (settle = { resolve, reject }));
  written.catch(() => undefined);
  const server = createServer((connection) => {
    server.close();
    pipeline(connection, createWriteStream(path)).then(settle.resolve, settle.reject);
  });
  await new Promise<void>((resolve, reject) => server.once('error', reject).listen(socket, resolve));
  return { socket, written, close: () => server.close() };
}

async function waitForMigration(machine: GuestMachine, path: string): Promise<void> {
  const { qmp } = machine.qemu;
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
export async function createOverlay(backing: string, path: string, backingFormat = 'qcow2'): Promise<void> {
  await mustRun(['qemu-img', 'create', '-q', '-f', 'qcow2', '-F', backingFormat, '-b', backing, path], 'creating a disk overlay');
}

/** The format of an operator's disk image, as qemu-img detects it. */
export async function diskFormat(path: string): Promise<string> {
  const info = JSON.parse(await mustRun(['qemu-img', 'info', '--output=json', path], `reading the disk image ${path}`)) as { format?: string };
  if (!info.format) throw internal(`qemu-img cannot tell the format of ${path}`, { context: { path } });
  return info.format;
}

/**
 * A task's own disk: a copy of the empty overlay template (a few hundred KiB), which is much faster than
 * running qemu-img for each task.
 */
export async function createTaskDisk(files: ReadyStateFiles, path: string): Promise<void> {
  await copyFile(files.overlayTemplate, path);
}
