import { WINDOWS_PLATFORM, WINE_MACHINE_KIND } from '../config/platforms.js';
import { decodeList } from '../db/json-columns.js';
import type { MachineRow, TaskRow } from '../db/schema.js';

/** What a task asks of a machine: a name, or a platform plus every tag. */
export interface MachineWish {
  machine: string;
  platform: string;
  tags: string[];
}

/** What a machine is matched by. `kind` is unknown for the machines of a remote Cuckoo node. */
export type MatchedMachine = Pick<MachineRow, 'name' | 'platform' | 'tags'> & { kind?: string };

/** What the fit of one machine depends on besides the machine itself: the rest of the cluster. */
export interface Fleet {
  /** An enabled machine of platform windows exists: platform=windows tasks are then theirs alone. */
  hasWindowsMachine: boolean;
}

/** The fleet of these machines (the cluster's enabled ones, or a remote node's). */
export function fleetOf(machines: readonly Pick<MachineRow, 'platform'>[]): Fleet {
  return { hasWindowsMachine: machines.some((machine) => machine.platform === WINDOWS_PLATFORM) };
}

export function wishOf(task: Pick<TaskRow, 'machine' | 'platform' | 'tags'>): MachineWish {
  return { machine: task.machine, platform: task.platform, tags: decodeList(task.tags) };
}

/**
 * A task naming a machine runs only there; otherwise platform (when given) and all tags must match.
 * PostgreSQL's claim (nestbox_claim_task, migration 0008) applies the same rule.
 */
export function machineFits(machine: MatchedMachine, wish: MachineWish, fleet: Fleet): boolean {
  if (wish.machine) return machine.name === wish.machine;
  if (!platformFits(machine, wish.platform, fleet)) return false;
  const tags = new Set(decodeList(machine.tags));
  return wish.tags.every((tag) => tags.has(tag));
}

/**
 * No platform, or the machine's. A task asking for windows also fits a linux machine, which runs it under
 * Wine, as long as the cluster has no Windows machine: an operator who configured one wants it used.
 */
function platformFits(machine: MatchedMachine, platform: string, fleet: Fleet): boolean {
  if (platform === '' || machine.platform === platform) return true;
  return platform === WINDOWS_PLATFORM && machine.kind === WINE_MACHINE_KIND && !fleet.hasWindowsMachine;
}

/** A linux machine is what runs the task, under Wine: it asks for platform windows, names no machine, and the fleet has no Windows machine. */
export function runsUnderWine(wish: MachineWish, fleet: Fleet): boolean {
  return wish.machine === '' && wish.platform === WINDOWS_PLATFORM && !fleet.hasWindowsMachine;
}

/** A matcher over the given machines (the cluster's enabled ones), with their fleet worked out once. */
export function machineMatcher(machines: readonly Pick<MachineRow, 'platform'>[]): (machine: MatchedMachine, wish: MachineWish) => boolean {
  const fleet = fleetOf(machines);
  return (machine, wish) => machineFits(machine, wish, fleet);
}

export function describeWish(wish: MachineWish): string {
  if (wish.machine) return `machine "${wish.machine}"`;
  const parts = [];
  if (wish.platform) parts.push(`platform "${wish.platform}"`);
  if (wish.tags.length > 0) parts.push(`tags ${wish.tags.map((t) => `"${t}"`).join(', ')}`);
  return parts.length > 0 ? parts.join(' and ') : 'any machine';
}
