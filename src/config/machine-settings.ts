import type { z } from 'zod';
import { MACHINE_KIND_DESCRIPTIONS, type MachineKind } from '../machinery/kinds.js';

export type { MachineKind } from '../machinery/kinds.js';

/** The kinds a machine may name, from the one description of each (machinery/kinds.ts). */
export const MACHINE_KINDS = MACHINE_KIND_DESCRIPTIONS.map((kind) => kind.name) as [MachineKind, ...MachineKind[]];

/**
 * Each kind's settings schema, so that a machine's `settings` are checked when the configuration loads,
 * not when the machine is first prepared.
 */
const settingsSchemas = new Map<string, z.ZodType>(MACHINE_KIND_DESCRIPTIONS.map((kind) => [kind.name, kind.settings]));

/** Reports each bad setting as an issue at `settings.<field>` of the machine. */
export function checkKindSettings(machine: { kind: MachineKind; settings: unknown }, context: z.RefinementCtx): void {
  const parsed = settingsSchemas.get(machine.kind)!.safeParse(machine.settings);
  if (parsed.success) return;
  for (const issue of parsed.error.issues) {
    context.addIssue({ code: 'custom', path: ['settings', ...issue.path], message: issue.message });
  }
}
