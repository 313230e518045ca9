import { chmod, copyFile, mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { ensureNativeProgram, MACHINE_INIT, nativeProgramDigest, SUPERVISOR, type NativeProgram } from '../host/native-programs.js';

/**
 * The sample supervisor in the guest (guest/analyzer/supervision.py runs it): nestbox's own
 * native/supervisor.c, and native/init.c for its hand-off (`init --exec`), built on the host and baked
 * into the image. Static, so that they run whatever libraries the guest's packages bring.
 *
 * The hand-off the sample's first process executes first (`init --exec COMMAND`), as the guest names it. */
export const GUEST_LAUNCHER = '/usr/lib/nestbox/init';

const GUEST_PROGRAMS: Array<{ program: NativeProgram; path: string }> = [
  { program: { ...SUPERVISOR, flags: [...SUPERVISOR.flags, '-static'] }, path: 'usr/lib/nestbox/supervisor' },
  { program: MACHINE_INIT, path: GUEST_LAUNCHER.slice(1) },
];

export async function installGuestSupervisor(root: string, buildDir: string): Promise<void> {
  for (const { program, path } of GUEST_PROGRAMS) {
    const target = join(root, path);
    await mkdir(join(target, '..'), { recursive: true });
    await copyFile(await ensureNativeProgram(program, buildDir), target);
    await chmod(target, 0o700);
  }
}

/** Identifies what installGuestSupervisor bakes in: a new supervisor or init is a new image. */
export function guestSupervisorDigest(): string {
  return GUEST_PROGRAMS.map(({ program }) => nativeProgramDigest(program)).join('-');
}
