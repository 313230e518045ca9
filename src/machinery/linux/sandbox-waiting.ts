import { readFile } from 'node:fs/promises';
import { setTimeout as sleep } from 'node:timers/promises';

/** x86_64's number of read(2), as /proc/PID/syscall shows it. */
const READ_SYSCALL = 0;

/**
 * Resolves true once process `pid` (a sandbox's pid 1, which bubblewrap has set up) waits in read() on
 * `fd`, its block fd: nothing more runs in the sandbox until it is released. /proc/PID/syscall names the
 * call a sleeping process is in and its arguments. False when the process is gone or not there in time.
 */
export async function untilBlockedOn(pid: number, fd: number, timeoutMs = 5000): Promise<boolean> {
  const waiting = `${READ_SYSCALL} 0x${fd.toString(16)} `;
  const deadline = performance.now() + timeoutMs;
  while (performance.now() < deadline) {
    const call = await readFile(`/proc/${pid}/syscall`, 'utf8').catch(() => null);
    if (call === null) return false;
    if (call.startsWith(waiting)) return true;
    await sleep(1);
  }
  return false;
}
