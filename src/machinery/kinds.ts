import { linuxSettingsSchema } from './linux/settings.js';
import { qemuSettingsSchema } from './qemu/settings.js';

/**
 * Every machine kind, described once: the name machines give as their `kind`, the schema their
 * `settings` are checked against when the configuration loads, and how to make the kind's machinery.
 * The machinery is loaded only when it is made, so that the configuration (and an API-only node) does
 * not pull the engine in: this file imports nothing of a kind but its settings schema.
 */
export const MACHINE_KIND_DESCRIPTIONS = [
  {
    name: 'linux',
    settings: linuxSettingsSchema,
    load: async () => (await import('./linux/index.js')).createLinuxMachinery,
  },
  {
    name: 'qemu',
    settings: qemuSettingsSchema,
    load: async () => (await import('./qemu/index.js')).createQemuMachinery,
  },
] as const;

export type MachineKind = (typeof MACHINE_KIND_DESCRIPTIONS)[number]['name'];
