import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { setTimeout as sleep } from 'node:timers/promises';
import { unavailable } from '../../errors.js';
import { runCommand } from '../host/command.js';
import { QmpClient } from './qmp.js';

/** One QEMU process and its QMP connection. */
export const QEMU_BINARY = 'qemu-system-x86_64';

export interface QemuProcess {
  readonly pid: number;
  readonly qmp: QmpClient;
  /** Resolves when the process has exited, with its exit code (null when killed by a signal). */
  readonly exited: Promise<number | null>;
  /** The last of what QEMU wrote on stderr (its error messages). */
  stderr(): string;
  /** Kills QEMU (SIGKILL: nothing in the guest deserves a clean shutdown) and waits for it to be gone. */
  kill(): Promise<void>;
}

const STDERR_KEEP = 8192;

/** `inheritFds` become QEMU's descriptors 3, 4... in order (a saved state to restore from). */
export async function launchQemu(argv: string[], qmpSocket: string, inheritFds: number[] = [], timeoutMs = 10_000): Promise<QemuProcess> {
  // setpriv makes the kernel kill QEMU when nestbox dies, so a crash leaves no machine running.
  const child = spawn('setpriv', ['--pdeathsig', 'KILL', '--', QEMU_BINARY, ...argv], { stdio: ['ignore', 'ignore', 'pipe', ...inheritFds] });
  let stderr = '';
  child.stderr!.setEncoding('utf8');
  child.stderr!.on('data', (chunk: string) => (stderr = (stderr + chunk).slice(-STDERR_KEEP)));
  const exited = exitOf(child);
  let qmp: QmpClient;
  try {
    qmp = await connectWhenListening(qmpSocket, exited, timeoutMs, () => stderr);
  } catch (error) {
    child.kill('SIGKILL');
    await exited;
    throw error;
  }
  return {
    pid: child.pid!,
    qmp,
    exited,
    stderr: () => stderr.trim(),
    async kill() {
      qmp.close();
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
      await exited;
    },
  };
}

function exitOf(child: ChildProcess): Promise<number | null> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve(child.exitCode);
  return once(child, 'close').then(([code]) => code as number | null, () => null);
}

/** QEMU creates its QMP socket early in start-up; polling finely keeps restores fast. */
async function connectWhenListening(path: string, exited: Promise<unknown>, timeoutMs: number, stderr: () => string): Promise<QmpClient> {
  let gone = false;
  void exited.then(() => (gone = true));
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (gone) throw unavailable(`QEMU exited at start-up: ${stderr().trim() || 'no message'}`, { context: { stderr: stderr() } });
    try {
      return await QmpClient.connect(path, Math.max(100, deadline - Date.now()));
    } catch (error) {
      if (Date.now() > deadline) throw unavailable(`QEMU's QMP socket did not come up: ${(error as Error).message}`, { cause: error });
      await sleep(3);
    }
  }
}

let versionCache: Promise<string> | undefined;

/** `QEMU emulator version 7.2.x (Debian ...)`: part of what a saved state is tied to. */
export function qemuVersion(): Promise<string> {
  versionCache ??= readQemuVersion().catch((error: unknown) => {
    versionCache = undefined;
    throw error;
  });
  return versionCache;
}

async function readQemuVersion(): Promise<string> {
  const result = await runCommand([QEMU_BINARY, '--version']).catch(() => null);
  if (!result || result.code !== 0) {
    throw unavailable(`${QEMU_BINARY} does not run${result ? `: ${result.stderr.trim()}` : ''} (install qemu-system-x86)`);
  }
  return result.stdout.split('\n')[0]!.trim();
}
