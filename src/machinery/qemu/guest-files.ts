import { createHash } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';

/**
 * What goes into the guest lives in the repository's `guest/` folder (shell and Python: languages the
 * guest has). Compiled code runs from <out>/src/machinery/qemu/, four levels below the repository.
 */
const GUEST_DIR = fileURLToPath(new URL('../../../../guest/', import.meta.url));

export function guestFile(relative: string): string {
  return `${GUEST_DIR}${relative}`;
}

/** Files baked into the image: a change to any of them means a new image. */
export const IMAGE_GUEST_FILES = ['initramfs/init', 'rootfs/init.sh', 'rootfs/inittab', 'agent/agent.py', 'tracer/tracer.py'] as const;

export async function guestFilesDigest(files: readonly string[]): Promise<string> {
  const hash = createHash('sha256');
  for (const file of files) hash.update(file).update('\0').update(await readFile(guestFile(file))).update('\0');
  return hash.digest('hex');
}
