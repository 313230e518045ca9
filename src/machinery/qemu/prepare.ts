import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import type { Logger } from 'pino';
import { type Config, configSectionsSchema } from '../../config/schema.js';
import { NestboxError } from '../../errors.js';
import { archiveLimits } from '../../storage/archives.js';
import { defaultDroppedFileLimits, type DroppedFileLimits } from '../dropped/budget.js';
import type { CreateTaskNetwork } from '../host/contracts.js';
import { buildImage, DEFAULT_RECIPE } from './image-builder.js';
import type { GuestImage, ReadyStateFiles } from './image-store.js';
import { kvmUsable } from './kvm-probe.js';
import type { Accelerator, Hardware } from './machine-args.js';
import type { QemuMachineContext } from './session.js';
import type { QemuSettings } from './settings.js';
import { BOOT_TIMEOUT_MS, diskFormat, ensureReadyState, imageSource, type ReadySource } from './snapshot.js';

export interface PrepareOptions {
  log: Logger;
  internetInterface: string;
  /** The configuration's `archives` section (passwords and limits the guest unpacks with); its defaults when not given. */
  archives?: Config['archives'];
  /** The configuration's `dropped_files`; its defaults when not given. */
  droppedFileLimits?: DroppedFileLimits;
  createTaskNetwork: CreateTaskNetwork;
}

/**
 * Everything a QEMU machine needs before its first task: its image (nestbox's, built from Debian
 * packages the first time, or the operator's disk), the accelerator (KVM only where a boot test shows it
 * works) and the ready state for that hardware (booted and saved the first time). Each step is cached
 * on disk, so later starts are quick.
 */
export async function prepareQemuMachine(name: string, settings: QemuSettings, options: PrepareOptions): Promise<QemuMachineContext> {
  const { log } = options;
  const image = settings.disk ? null : await buildImage({ imagesDir: settings.image_dir, recipe: recipeOf(settings), log });
  const hardware: Hardware = {
    accel: await accelerator(settings, image, log),
    memoryMb: settings.memory_mb,
    cpus: settings.cpus,
    nicModel: settings.nic_model,
    diskBus: settings.disk_bus,
  };
  const source = image ? imageSource(image) : await operatorSource(name, settings);
  const ready = await ensureReadyState(source, {
    hardware,
    runDir: join(settings.run_dir, `build-${process.pid}`),
    bootTimeoutMs: settings.boot_timeout * 1000 || BOOT_TIMEOUT_MS,
    log,
  });
  log.info({ machine: name, image: source.name, accel: hardware.accel, state: ready.stateFile }, 'qemu machine ready');
  return {
    name,
    settings,
    hardware,
    image,
    ready,
    internetInterface: options.internetInterface,
    archiveLimits: archiveLimits(options.archives ?? configSectionsSchema.shape.archives.parse(undefined)),
    droppedFileLimits: options.droppedFileLimits ?? defaultDroppedFileLimits(),
    createTaskNetwork: options.createTaskNetwork,
  };
}

function recipeOf(settings: QemuSettings) {
  const packages = [...DEFAULT_RECIPE.packages, ...settings.extra_packages.filter((name) => !DEFAULT_RECIPE.packages.includes(name))];
  return { ...DEFAULT_RECIPE, name: `debian-${settings.suite}`, suite: settings.suite, mirror: settings.mirror, packages };
}

/**
 * An operator's disk booted through its own firmware. Its state lives where `state` says, with the disk
 * as it was when the state was saved beside it; a missing state is made on first use.
 */
async function operatorSource(name: string, settings: QemuSettings): Promise<ReadySource> {
  if (!existsSync(settings.disk)) throw invalidConfig(`machine ${name}: the disk ${settings.disk} does not exist`, { machine: name });
  if (!existsSync(dirname(settings.state))) {
    throw invalidConfig(`machine ${name}: the folder of the state file ${settings.state} does not exist`, { machine: name });
  }
  const files = (key: string): ReadyStateFiles => ({
    key,
    stateFile: settings.state,
    disk: `${settings.state}.disk.qcow2`,
    overlayTemplate: `${settings.state}.overlay.qcow2`,
  });
  return { name, baseDisk: settings.disk, baseFormat: await diskFormat(settings.disk), boot: null, files, lockPath: `${settings.state}.lock` };
}

function invalidConfig(message: string, context: Record<string, unknown>): NestboxError {
  return new NestboxError('invalid_config', message, { context });
}

async function accelerator(settings: QemuSettings, image: GuestImage | null, log: Logger): Promise<Accelerator> {
  if (settings.accel !== 'auto') return settings.accel;
  // The probe boots nestbox's kernel: for an operator's image, nestbox's image is built for it once
  // (set accel explicitly to avoid that).
  const probeImage = image ?? (await buildImage({ imagesDir: settings.image_dir, recipe: recipeOf(settings), log }));
  const subject = { kernel: probeImage.kernel, initrd: probeImage.initrd, kernelRelease: probeImage.manifest.kernelRelease };
  return (await kvmUsable(subject, join(settings.image_dir, 'kvm-probe.json'), log)) ? 'kvm' : 'tcg';
}
