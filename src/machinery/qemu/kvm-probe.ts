import { spawn } from 'node:child_process';
import { constants } from 'node:fs';
import { access, mkdir, readFile, writeFile } from 'node:fs/promises';
import { release } from 'node:os';
import { dirname } from 'node:path';
import type { Logger } from 'pino';
import { QEMU_BINARY, qemuVersion } from './qemu-process.js';

/**
 * Whether QEMU can run this guest with KVM here. /dev/kvm existing proves little (on some hosts it is a
 * paravirtual KVM that hangs or aborts on a stock kernel), so the guest's own kernel and initramfs are
 * booted with KVM and no disk: a working KVM reaches the initramfs, which finds no root file system and
 * powers the machine off within seconds. The answer is kept in a file per host kernel, QEMU build and
 * guest kernel, so the probe (which waits out its timeout when KVM hangs) runs once.
 */
export const PROBE_TIMEOUT_MS = 20_000;
const SUCCESS_MARK = 'nestbox initramfs: cannot mount the root file system';

export interface ProbeSubject {
  kernel: string;
  initrd: string;
  kernelRelease: string;
}

const inProcess = new Map<string, Promise<boolean>>();

export async function kvmUsable(subject: ProbeSubject, cacheFile: string, log: Logger): Promise<boolean> {
  const key = JSON.stringify({ host: release(), qemu: await qemuVersion(), guest: subject.kernelRelease });
  let answer = inProcess.get(key);
  if (!answer) {
    answer = cachedOrProbe(key, subject, cacheFile, log);
    inProcess.set(key, answer);
  }
  return answer;
}

async function cachedOrProbe(key: string, subject: ProbeSubject, cacheFile: string, log: Logger): Promise<boolean> {
  const cache = await readCache(cacheFile);
  if (key in cache) return cache[key]!;
  const started = Date.now();
  const usable = await probe(subject);
  log.info({ usable, ms: Date.now() - started }, usable ? 'KVM works for QEMU guests' : 'KVM is not usable: QEMU guests run under TCG');
  cache[key] = usable;
  await mkdir(dirname(cacheFile), { recursive: true });
  await writeFile(cacheFile, `${JSON.stringify(cache, null, 2)}\n`);
  return usable;
}

async function readCache(path: string): Promise<Record<string, boolean>> {
  try {
    return JSON.parse(await readFile(path, 'utf8')) as Record<string, boolean>;
  } catch {
    return {};
  }
}

async function probe(subject: ProbeSubject): Promise<boolean> {
  try {
    await access('/dev/kvm', constants.R_OK | constants.W_OK);
  } catch {
    return false;
  }
  const argv = [
    '-machine', 'pc,accel=kvm', '-cpu', 'host', '-m', '256', '-nodefaults', '-no-user-config', '-display', 'none',
    '-no-reboot', '-serial', 'stdio', '-kernel', subject.kernel, '-initrd', subject.initrd, '-append', 'console=ttyS0 panic=-1',
  ];
  return new Promise((resolve) => {
    const child = spawn('setpriv', ['--pdeathsig', 'KILL', '--', QEMU_BINARY, ...argv], { stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => (output = (output + chunk.toString('latin1')).slice(-65536)));
    const timer = setTimeout(() => child.kill('SIGKILL'), PROBE_TIMEOUT_MS);
    child.on('error', () => resolve(false));
    child.on('close', () => {
      clearTimeout(timer);
      resolve(output.includes(SUCCESS_MARK));
    });
  });
}
