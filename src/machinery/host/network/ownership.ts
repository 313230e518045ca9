import { mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

/**
 * Which process owns which task network. A record is written before anything of the task is created
 * and removed after everything is gone, so anything with nestbox's names and no live owner was left by
 * a crash. Records live in /run, which, like network namespaces, does not survive a reboot.
 */
export const OWNERS_DIR = '/run/nestbox/net';

export interface OwnerRecord {
  pid: number;
  /** Start time of the owner (clock ticks since boot), so a reused pid is not mistaken for the owner. */
  startTime: string;
}

/**
 * Records this process as the owner of id: 'reclaimed' when a dead owner's record was replaced (its
 * network may still be there), null when a live process owns it.
 */
export function claim(id: string): 'claimed' | 'reclaimed' | null {
  mkdirSync(OWNERS_DIR, { recursive: true, mode: 0o700 });
  const path = join(OWNERS_DIR, `${id}.json`);
  const record: OwnerRecord = { pid: process.pid, startTime: processStartTime(process.pid) ?? '' };
  try {
    writeFileSync(path, JSON.stringify(record), { flag: 'wx' });
    return 'claimed';
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST' || isOwnerAlive(readRecord(path))) return null;
    writeFileSync(path, JSON.stringify(record));
    return 'reclaimed';
  }
}

export function release(id: string): void {
  rmSync(join(OWNERS_DIR, `${id}.json`), { force: true });
}

/** Ids whose owner is still running; every other nestbox network is stale. */
export function liveIds(): Set<string> {
  const live = new Set<string>();
  let files: string[];
  try {
    files = readdirSync(OWNERS_DIR);
  } catch {
    return live;
  }
  for (const file of files.filter((name) => name.endsWith('.json'))) {
    const id = file.slice(0, -'.json'.length);
    if (isOwnerAlive(readRecord(join(OWNERS_DIR, file)))) live.add(id);
  }
  return live;
}

/** Removes the records of owners that are gone, checking each one now (a record may be new). */
export function forgetDeadOwners(): void {
  let files: string[];
  try {
    files = readdirSync(OWNERS_DIR).filter((name) => name.endsWith('.json'));
  } catch {
    return;
  }
  for (const file of files) {
    const path = join(OWNERS_DIR, file);
    if (!isOwnerAlive(readRecord(path))) rmSync(path, { force: true });
  }
}

function readRecord(path: string): OwnerRecord | null {
  try {
    return JSON.parse(readFileSync(path, 'utf8')) as OwnerRecord;
  } catch {
    return null;
  }
}

function isOwnerAlive(record: OwnerRecord | null): boolean {
  if (!record || !Number.isInteger(record.pid)) return false;
  const startTime = processStartTime(record.pid);
  return startTime !== null && startTime === record.startTime;
}

function processStartTime(pid: number): string | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // The command name (field 2) may hold spaces and parentheses: count fields after its closing ')'.
    return stat.slice(stat.lastIndexOf(')') + 2).split(' ')[19] ?? null;
  } catch {
    return null;
  }
}
