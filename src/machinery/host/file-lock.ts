import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { internal } from '../../errors.js';

export interface HeldLock {
  release(): Promise<void>;
}

/**
 * Takes an exclusive flock(2) on `path`, waiting for other holders, processes of other nestbox
 * instances included. The lock is held by a small `flock` child whose stdin we keep open: it is released
 * when we close that pipe or when this process dies, so a crash never leaves the lock behind.
 */
export async function lockFile(path: string): Promise<HeldLock> {
  const child = spawn('flock', ['--exclusive', path, 'sh', '-c', 'echo locked; exec cat >/dev/null'], {
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  let stderr = '';
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const locked = new Promise<void>((resolve, reject) => {
    child.stdout.once('data', () => resolve());
    child.once('error', reject);
    child.once('exit', (code) => reject(new Error(`flock exited with ${code}: ${stderr.trim()}`)));
  });
  try {
    await locked;
  } catch (error) {
    throw internal(`cannot lock ${path}: ${(error as Error).message}`, { cause: error, context: { path } });
  }
  return {
    async release() {
      if (child.exitCode !== null) return;
      const exited = once(child, 'exit');
      child.stdin.end();
      await exited;
    },
  };
}
