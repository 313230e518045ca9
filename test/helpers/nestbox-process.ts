import { type ChildProcessWithoutNullStreams, spawn } from 'node:child_process';
import { dirname, join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';

const cli = join(dirname(fileURLToPath(import.meta.url)), '..', '..', 'src', 'cli', 'main.js');

export interface NestboxProcess {
  child: ChildProcessWithoutNullStreams;
  url: string;
  /** Everything it wrote so far, for failure messages. */
  output(): string;
}

/** A real `nestbox start` on a random loopback port, with its own home; `env` adds NESTBOX_* settings. */
export async function startNestbox(home: string, env: Record<string, string> = {}, args: string[] = []): Promise<NestboxProcess> {
  const child = spawn(process.execPath, [cli, '--home', home, 'start', '--host', '127.0.0.1', '--port', '0', ...args], {
    env: { ...process.env, NESTBOX_API_TOKEN: '', NESTBOX_LOGGING_LEVEL: 'warn', ...env },
  });
  let output = '';
  const collect = (chunk: Buffer) => (output += chunk.toString());
  child.stderr.on('data', collect);
  const url = await new Promise<string>((resolve, reject) => {
    child.stdout.on('data', (chunk: Buffer) => {
      collect(chunk);
      const match = /listening on (http:\/\/\S+)/.exec(output);
      if (match) resolve(match[1]!);
    });
    child.on('exit', (code) => reject(new Error(`nestbox exited with ${code}: ${output}`)));
  });
  return { child, url, output: () => output };
}

/** Ends a process and waits until it is gone. */
export async function stopNestbox(process: NestboxProcess | undefined, signal: NodeJS.Signals = 'SIGTERM'): Promise<void> {
  if (!process || process.child.exitCode !== null || process.child.signalCode !== null) return;
  const exited = new Promise((resolve) => process.child.once('exit', resolve));
  process.child.kill(signal);
  await exited;
}

/** Polls `probe` until it gives a value. */
export async function waitFor<T>(what: string, probe: () => Promise<T | undefined>, timeoutMs: number, everyMs = 300): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(everyMs);
  }
}
