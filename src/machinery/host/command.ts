import { spawn, type SpawnOptions } from 'node:child_process';
import { internal } from '../../errors.js';

export interface CommandResult {
  code: number;
  stdout: string;
  stderr: string;
}

/** Runs a host command to completion and collects its output; never throws for a non-zero exit. */
export function runCommand(argv: string[], options: SpawnOptions & { input?: string | Buffer } = {}): Promise<CommandResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(argv[0]!, argv.slice(1), { ...options, stdio: ['pipe', 'pipe', 'pipe'] });
    const stdout: Buffer[] = [];
    const stderr: Buffer[] = [];
    child.stdout!.on('data', (chunk: Buffer) => stdout.push(chunk));
    child.stderr!.on('data', (chunk: Buffer) => stderr.push(chunk));
    child.on('error', (error) => reject(internal(`cannot run ${argv[0]}: ${error.message}`, { cause: error, context: { argv } })));
    child.on('close', (code, signal) =>
      resolve({
        code: code ?? (signal ? 128 : 1),
        stdout: Buffer.concat(stdout).toString(),
        stderr: Buffer.concat(stderr).toString(),
      }),
    );
    child.stdin!.on('error', () => undefined);
    child.stdin!.end(options.input ?? '');
  });
}

/** Runs a host command and throws an internal NestboxError with its stderr when it fails. */
export async function mustRun(argv: string[], what: string, options: SpawnOptions & { input?: string | Buffer } = {}): Promise<string> {
  const result = await runCommand(argv, options);
  if (result.code !== 0) {
    const detail = (result.stderr || result.stdout).trim().split('\n').slice(-5).join('\n');
    throw internal(`${what} failed (exit ${result.code}): ${detail}`, { context: { argv, code: result.code } });
  }
  return result.stdout;
}
