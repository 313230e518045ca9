import { chmod, copyFile, mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { ensureMonitor } from '../host/tracer/monitor-build.js';

/** Where the image keeps nestbox's monitor (guest/tracer/tracer.py starts it at boot). */
export const GUEST_MONITOR = 'usr/lib/nestbox/monitor';

/**
 * Bakes nestbox's monitor into the guest root: the same loader and BPF program as the host's, built
 * on the host (its BPF part is CO-RE, relocated when it loads against the guest kernel's own BTF), so
 * the guest needs no compiler and the monitor attaches in a moment even under TCG.
 */
export async function installGuestMonitor(root: string): Promise<void> {
  const target = join(root, GUEST_MONITOR);
  await mkdir(join(target, '..'), { recursive: true });
  await copyFile(await ensureMonitor(), target);
  await chmod(target, 0o700);
}
