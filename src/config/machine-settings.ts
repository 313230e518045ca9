import type { z } from 'zod';
import { linuxSettingsSchema } from '../machinery/linux/settings.js';
import { qemuSettingsSchema } from '../machinery/qemu/settings.js';

/**
 * Each machine kind's settings schema, so that a machine's `settings` are checked when the configuration
 * loads, not when the machine is first prepared. The schemas live with their kinds and import nothing of
 * the machinery, so the configuration does not pull the engine in.
 */
export const machineSettingsSchemas = {
  linux: linuxSettingsSchema,
  qemu: qemuSettingsSchema,
} satisfies Record<string, z.ZodType>;

export type MachineKind = keyof typeof machineSettingsSchemas;

export const MACHINE_KINDS = Object.keys(machineSettingsSchemas) as [MachineKind, ...MachineKind[]];

/** Reports each bad setting as an issue at `settings.<field>` of the machine. */
export function checkKindSettings(machine: { kind: MachineKind; settings: unknown }, context: z.RefinementCtx): void {
  const parsed = machineSettingsSchemas[machine.kind].safeParse(machine.settings);
  if (parsed.success) return;
  for (const issue of parsed.error.issues) {
    context.addIssue({ code: 'custom', path: ['settings', ...issue.path], message: issue.message });
  }
}
