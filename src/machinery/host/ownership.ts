import { readFileSync } from 'node:fs';
import { readFile, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';

/**
 * Who owns a machine's run folder: the process that started it, recorded before anything else is
 * created. A machine whose owner is gone was left by a crash and may be cleaned up; one whose owner
 * still runs (another nestbox, another test) is left alone.
 */
export interface MachineOwner {
  pid: number;
  /** Start time of the owner in clock ticks since boot, so that a reused pid is not taken for it. */
  startTime: string;
  taskId: number;
}

const OWNER_FILE = 'owner.json';
/**
 * A run folder is made, then its owner recorded, by another nestbox perhaps: a folder with no owner
 * record yet that is younger than this is being set up, not left by a crash.
 */
const SETUP_GRACE_MS = 60_000;

export async function recordOwner(dir: string, taskId: number): Promise<void> {
  const owner: MachineOwner = { pid: process.pid, startTime: processStartTime(process.pid) ?? '', taskId };
  await writeFile(join(dir, OWNER_FILE), JSON.stringify(owner));
}

/** Whether the machine's folder is in use: its owner still runs, or it is still being set up. */
export async function isClaimed(dir: string): Promise<boolean> {
  let record: string;
  try {
    record = await readFile(join(dir, OWNER_FILE), 'utf8');
  } catch {
    return isBeingSetUp(dir);
  }
  try {
    const owner = JSON.parse(record) as MachineOwner;
    return processStartTime(owner.pid) === owner.startTime;
  } catch {
    return false;
  }
}

async function isBeingSetUp(dir: string): Promise<boolean> {
  try {
    return Date.now() - (await stat(dir)).ctimeMs < SETUP_GRACE_MS;
  } catch {
    return false;
  }
}

export function processStartTime(pid: number): string | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // The command name may hold spaces and parentheses: count the fields after its closing ')'.
    return stat.slice(stat.lastIndexOf(')') + 2).split(' ')[19] ?? null;
  } catch {
    return null;
  }
}
