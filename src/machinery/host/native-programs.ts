import { createHash } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { mkdir, rename, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { mustRun } from './command.js';

/** The C sources in the clone's native/ folder (this file runs from dist/src/machinery/host/). */
const NATIVE_SOURCES = fileURLToPath(new URL('../../../../native/', import.meta.url));

export interface NativeProgram {
  /** File name in native/. */
  source: string;
  /** What it is, for error messages. */
  purpose: string;
  flags: string[];
  /** Libraries to link, after the source. */
  libs?: string[];
  /** Headers of native/ it includes: a change to one rebuilds it. */
  headers?: string[];
}

/** The calls the sample's seccomp filter hands to the supervisor, shared by both. */
const SUPERVISED_CALLS = 'supervised-calls.h';

/** pid 1 of every sandbox; static, so that it runs in any guest root. */
export const MACHINE_INIT: NativeProgram = { source: 'init.c', purpose: 'the machine init', flags: ['-static'], headers: [SUPERVISED_CALLS] };

/** Starts the sandbox in a user namespace whose root is an unprivileged host id. */
export const USERNS_EXEC: NativeProgram = { source: 'userns-exec.c', purpose: 'the user namespace launcher', flags: [] };

/** Answers the sample's seccomp notifications from the host: long sleeps, timers and waits, executions, deletions, exits. */
export const SUPERVISOR: NativeProgram = { source: 'supervisor.c', purpose: 'the sample supervisor', flags: [], libs: ['-lcrypto'], headers: [SUPERVISED_CALLS] };

/**
 * Compiles a program of native/ with the host's C compiler, once per source version, into
 * `dir/<name>-<hash>`, and returns its path. A build goes to a temporary name renamed into place, so
 * that concurrent callers and crashed builds never leave a half-written binary under the final name.
 */
export async function ensureNativeProgram(program: NativeProgram, dir: string): Promise<string> {
  const sourcePath = join(NATIVE_SOURCES, program.source);
  const binary = join(dir, `${program.source.replace(/\.c$/, '')}-${nativeProgramDigest(program)}`);
  if (existsSync(binary)) return binary;
  await mkdir(dir, { recursive: true });
  const building = `${binary}.${process.pid}`;
  try {
    await mustRun(['gcc', '-O2', '-Wall', '-Wextra', ...program.flags, '-o', building, sourcePath, ...(program.libs ?? [])], `compiling ${program.purpose}`);
    await rename(building, binary);
  } finally {
    await rm(building, { force: true });
  }
  return binary;
}

/** Identifies a program's source and build: a new version is a new binary (and a new qemu guest image). */
export function nativeProgramDigest(program: NativeProgram): string {
  const hashed = createHash('sha256').update(readFileSync(join(NATIVE_SOURCES, program.source)));
  for (const header of program.headers ?? []) hashed.update(readFileSync(join(NATIVE_SOURCES, header)));
  return hashed.update(program.flags.join(' ')).update((program.libs ?? []).join(' ')).digest('hex').slice(0, 12);
}
