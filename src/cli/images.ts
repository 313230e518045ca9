import { existsSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import { pino } from 'pino';
import { CONFIG_FILE_NAME, defaultHome, loadConfig } from '../config/load.js';
import { invalidInput } from '../errors.js';
import { createTaskNetwork } from '../machinery/host/network/index.js';
import { otherVersions } from '../machinery/qemu/image-store.js';
import { prepareQemuMachine } from '../machinery/qemu/prepare.js';
import { parseQemuSettings, type QemuSettings } from '../machinery/qemu/settings.js';

/**
 * `nestbox image build`: makes everything the qemu machines need before their first task, so the
 * service never builds while a task waits: nestbox's guest image (from Debian packages, minutes the
 * first time), the KVM probe, and each machine's ready state (a boot, then its memory saved). With no
 * configuration, or no qemu machine in it, it prepares a machine with the default settings.
 */
export interface ImageBuildOptions {
  home?: string;
  machine?: string;
  /** Remove the other versions of the images built. */
  prune?: boolean;
}

export async function imageBuildCommand(options: ImageBuildOptions): Promise<void> {
  const log = pino({ level: 'info' }, pino.destination(2));
  for (const [name, settings] of machinesToPrepare(options)) {
    const started = Date.now();
    const context = await prepareQemuMachine(name, settings, { log, internetInterface: '', createTaskNetwork });
    process.stdout.write(
      `${name}: ${context.image ? `image ${context.image.dir}` : `disk ${settings.disk}`}, ${context.hardware.accel}, ` +
        `${context.hardware.memoryMb} MiB, ready state ${context.ready.stateFile} (${((Date.now() - started) / 1000).toFixed(1)} s)\n`,
    );
    if (options.prune && context.image) {
      for (const dir of await otherVersions(settings.image_dir, context.image)) {
        await rm(dir, { recursive: true, force: true });
        process.stdout.write(`removed ${dir}\n`);
      }
    }
  }
}

function machinesToPrepare(options: ImageBuildOptions): [string, QemuSettings][] {
  const home = options.home ?? defaultHome();
  const configured = existsSync(join(home, CONFIG_FILE_NAME))
    ? loadConfig(home).config.machines.filter((machine) => machine.kind === 'qemu')
    : [];
  const chosen = options.machine ? configured.filter((machine) => machine.name === options.machine) : configured;
  if (options.machine && chosen.length === 0) throw invalidInput(`no qemu machine named ${options.machine} in ${join(home, CONFIG_FILE_NAME)}`);
  if (chosen.length === 0) return [['default', parseQemuSettings({}, 'default')]];
  return chosen.map((machine) => [machine.name, parseQemuSettings(machine.settings, machine.name)]);
}
