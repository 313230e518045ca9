import { execFile } from 'node:child_process';
import { access, readdir, readFile } from 'node:fs/promises';
import { promisify } from 'node:util';

const run = promisify(execFile);

export const TRACEFS = '/sys/kernel/tracing';

/** Tracepoints need tracefs; minimal systems (and this kind of VM) boot without it mounted. */
export async function ensureTracefs(): Promise<void> {
  if (await exists(`${TRACEFS}/events`)) return;
  await run('mount', ['-t', 'tracefs', 'tracefs', TRACEFS]);
}

/** The system calls this kernel has entry tracepoints for. */
export async function syscallTracepoints(): Promise<Set<string>> {
  const names = await readdir(`${TRACEFS}/events/syscalls`);
  return new Set(names.filter((n) => n.startsWith('sys_enter_')).map((n) => n.slice('sys_enter_'.length)));
}

/** Every `category:name` tracepoint the kernel offers. */
export async function availableEvents(): Promise<string[]> {
  return (await readFile(`${TRACEFS}/available_events`, 'utf8')).split('\n').filter(Boolean);
}

async function exists(path: string): Promise<boolean> {
  try {
    await access(path);
    return true;
  } catch {
    return false;
  }
}
