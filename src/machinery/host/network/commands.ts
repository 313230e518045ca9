import { spawn } from 'node:child_process';
import { NestboxError } from '../../../errors.js';

/** Runs the network tools (ip, nft, sysctl) with whole scripts on stdin, so one task costs few processes. */
export interface CommandResult {
  stdout: string;
  stderr: string;
}

export interface RunOptions {
  input?: string;
  timeoutMs?: number;
  /** Exit codes that are not failures (e.g. "already gone" during cleanup). */
  allowFailure?: boolean;
}

export async function run(command: string, args: readonly string[], options: RunOptions = {}): Promise<CommandResult & { code: number }> {
  const child = spawn(command, args, { stdio: ['pipe', 'pipe', 'pipe'], timeout: options.timeoutMs ?? 15_000 });
  const stdout: Buffer[] = [];
  const stderr: Buffer[] = [];
  child.stdout.on('data', (chunk: Buffer) => stdout.push(chunk));
  child.stderr.on('data', (chunk: Buffer) => stderr.push(chunk));
  child.stdin.on('error', () => undefined);
  child.stdin.end(options.input ?? '');
  const code = await new Promise<number>((resolve, reject) => {
    child.once('error', reject);
    child.once('close', (exitCode, signal) => resolve(exitCode ?? (signal ? 128 : 1)));
  }).catch((error: unknown) => {
    throw new NestboxError('unavailable', `cannot run ${command}: ${(error as Error).message}`, {
      cause: error,
      context: { command, args },
    });
  });
  const result = { stdout: Buffer.concat(stdout).toString('utf8'), stderr: Buffer.concat(stderr).toString('utf8'), code };
  if (code !== 0 && !options.allowFailure) {
    throw new NestboxError('internal', `${command} ${args.join(' ')} failed: ${firstLine(result.stderr) || `exit code ${code}`}`, {
      context: { command, args, code, stderr: result.stderr.slice(0, 4000), input: options.input?.slice(0, 4000) },
    });
  }
  return result;
}

/** `ip -batch -` in the host namespace, or in one of ours with `netns`. */
export function ipBatch(lines: readonly string[], netns?: string, options: Omit<RunOptions, 'input'> = {}) {
  // -force keeps going past lines that fail, which cleanup relies on (some things are already gone).
  const args = [...(netns ? ['-n', netns] : []), ...(options.allowFailure ? ['-force'] : []), '-batch', '-'];
  return run('ip', args, { ...options, input: `${lines.join('\n')}\n` });
}

/** Runs a command inside a named network namespace. */
export function inNetns(netns: string, command: string, args: readonly string[], options: RunOptions = {}) {
  return run('ip', ['netns', 'exec', netns, command, ...args], options);
}

function firstLine(text: string): string {
  return text.trim().split('\n')[0] ?? '';
}
