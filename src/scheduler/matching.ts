import { decodeList } from '../db/json-columns.js';
import type { MachineRow, TaskRow } from '../db/schema.js';

/** What a task asks of a machine: a name, or a platform plus every tag. */
export interface MachineWish {
  machine: string;
  platform: string;
  tags: string[];
}

export function wishOf(task: Pick<TaskRow, 'machine' | 'platform' | 'tags'>): MachineWish {
  return { machine: task.machine, platform: task.platform, tags: decodeList(task.tags) };
}

/** A task naming a machine runs only there; otherwise platform (when given) and all tags must match. */
export function machineFits(machine: Pick<MachineRow, 'name' | 'platform' | 'tags'>, wish: MachineWish): boolean {
  if (wish.machine) return machine.name === wish.machine;
  if (wish.platform && machine.platform !== wish.platform) return false;
  const tags = new Set(decodeList(machine.tags));
  return wish.tags.every((tag) => tags.has(tag));
}

export function describeWish(wish: MachineWish): string {
  if (wish.machine) return `machine "${wish.machine}"`;
  const parts = [];
  if (wish.platform) parts.push(`platform "${wish.platform}"`);
  if (wish.tags.length > 0) parts.push(`tags ${wish.tags.map((t) => `"${t}"`).join(', ')}`);
  return parts.length > 0 ? parts.join(' and ') : 'any machine';
}
