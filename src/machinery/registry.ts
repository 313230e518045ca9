import type { Logger } from 'pino';
import type { Config } from '../config/schema.js';
import { NestboxError } from '../errors.js';
import { MACHINE_KIND_DESCRIPTIONS } from './kinds.js';
import type { Machinery, MachineryFactory } from './types.js';

/** The kinds a machine may name, as machinery/kinds.ts describes them. */
export function machineryKinds(): string[] {
  return MACHINE_KIND_DESCRIPTIONS.map((kind) => kind.name);
}

/** Makes the machinery of a kind, loading the kind's code first. */
export async function createMachinery(kind: string, config: Config, log: Logger): Promise<Machinery> {
  return (await factoryOf(kind))(config, log);
}

/**
 * The scheduler's `machineryFor`: one machinery instance per kind, made on first use. The kinds the
 * configured machines name are loaded here, so that asking for one later needs no waiting.
 */
export async function machineryResolver(config: Config, log: Logger): Promise<(kind: string) => Machinery> {
  const kinds = [...new Set(config.machines.map((machine) => machine.kind))];
  const factories = new Map<string, MachineryFactory>(await Promise.all(kinds.map(async (kind) => [kind, await factoryOf(kind)] as const)));
  const made = new Map<string, Machinery>();
  return (kind) => {
    let machinery = made.get(kind);
    if (!machinery) {
      const factory = factories.get(kind);
      if (!factory) throw unknownKind(kind);
      machinery = factory(config, log);
      made.set(kind, machinery);
    }
    return machinery;
  };
}

async function factoryOf(kind: string): Promise<MachineryFactory> {
  const description = MACHINE_KIND_DESCRIPTIONS.find((candidate) => candidate.name === kind);
  if (!description) throw unknownKind(kind);
  return description.load();
}

function unknownKind(kind: string): NestboxError {
  return new NestboxError('invalid_config', `no machinery of kind "${kind}" (known: ${machineryKinds().join(', ')})`, { context: { kind } });
}
