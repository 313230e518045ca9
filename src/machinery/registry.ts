import type { Logger } from 'pino';
import type { Config } from '../config/schema.js';
import { NestboxError } from '../errors.js';
import { createLinuxMachinery } from './linux/index.js';
import { createQemuMachinery } from './qemu/index.js';
import type { Machinery, MachineryFactory } from './types.js';

/** Machinery kinds by the name machines give in their `kind`. */
const factories: ReadonlyMap<string, MachineryFactory> = new Map<string, MachineryFactory>([
  ['linux', createLinuxMachinery],
  ['qemu', createQemuMachinery],
]);

export function machineryKinds(): string[] {
  return [...factories.keys()];
}

export function createMachinery(kind: string, config: Config, log: Logger): Machinery {
  const factory = factories.get(kind);
  if (!factory) {
    throw new NestboxError('invalid_config', `no machinery of kind "${kind}" (known: ${machineryKinds().join(', ')})`, {
      context: { kind },
    });
  }
  return factory(config, log);
}

/** The scheduler's `machineryFor`: one machinery instance per kind, made on first use. */
export function machineryResolver(config: Config, log: Logger): (kind: string) => Machinery {
  const made = new Map<string, Machinery>();
  return (kind) => {
    let machinery = made.get(kind);
    if (!machinery) {
      machinery = createMachinery(kind, config, log);
      made.set(kind, machinery);
    }
    return machinery;
  };
}
