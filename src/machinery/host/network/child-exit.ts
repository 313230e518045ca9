import type { ChildProcess } from 'node:child_process';
import { internal } from '../../../errors.js';

/**
 * Ends a helper process of the task network (capture, fake internet) and resolves only once it has
 * exited and been reaped: Node emits 'exit' after it has waited for the child, so from then on the pid
 * is gone from its namespace. A helper that ignores the polite request is killed after graceMs.
 */
export interface EndOptions {
  /** Asks the helper to finish its work and exit (a signal, or closing its stdin). */
  ask: () => void;
  graceMs: number;
  /** How long a killed helper may take to disappear before it is reported (a process stuck in the kernel). */
  killedMs?: number;
}

const KILLED_MS = 5_000;

function hasExited(child: ChildProcess): boolean {
  return child.exitCode !== null || child.signalCode !== null;
}

/** Resolves once the child has exited (at once if it already has, or never started: no pid); never rejects. */
function exitOf(child: ChildProcess): Promise<void> {
  if (hasExited(child) || child.pid === undefined) return Promise.resolve();
  return new Promise((resolve) => child.once('exit', () => resolve()));
}

export async function endChild(child: ChildProcess, { ask, graceMs, killedMs = KILLED_MS }: EndOptions): Promise<void> {
  const exited = exitOf(child);
  if (hasExited(child)) return;
  ask();
  if (await within(exited, graceMs)) return;
  await killChild(child, killedMs);
}

/** SIGKILL, then waits for the exit: a helper given up on must not stay in the namespace either. */
export async function killChild(child: ChildProcess, killedMs = KILLED_MS): Promise<void> {
  const exited = exitOf(child);
  if (hasExited(child)) return;
  child.kill('SIGKILL');
  if (await within(exited, killedMs)) return;
  throw internal(`process ${child.pid} did not exit after SIGKILL`, { context: { pid: child.pid, command: child.spawnargs.join(' ') } });
}

/** Whether the promise settled within ms. */
async function within(promise: Promise<void>, ms: number): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<false>((resolve) => (timer = setTimeout(() => resolve(false), ms)));
  const settled = await Promise.race([promise.then(() => true as const), late]);
  clearTimeout(timer);
  return settled;
}
