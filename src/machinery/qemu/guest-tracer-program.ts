import { createHash, randomBytes, randomInt } from 'node:crypto';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { BPFTRACE_STRLEN, bpftraceScript, tracepointsOf } from '../host/tracer/bpftrace-script.js';

/**
 * The guest's eBPF behaviour program, written at image build by the generator of the host's own eBPF
 * tracer and baked into the image (`guest/tracer/tracer.py` runs it). Its owner is the guest's tracer
 * process, whose pid bpftrace gets as its first argument (`$1`).
 *
 * The marker and nonce are drawn per image build: a sample would have to read bpftrace's memory (as
 * root in the guest) to learn them.
 */
export const GUEST_TRACER_DIR = 'usr/lib/nestbox/tracer';
/** Per-CPU output buffer in the guest: 4 MiB (the host's 16 MiB would be a large part of a small guest's memory). */
const GUEST_PERF_RB_PAGES = 1024;
const GUEST_MAP_KEYS_MAX = 16384;

export interface GuestTracerProgram {
  script: string;
  /** `category:name` of every tracepoint the script uses. */
  tracepoints: string[];
  config: { marker: string; nonce: number; env: Record<string, string> };
}

export function guestTracerProgram(hasSyscall: (name: string) => boolean, marker: string, nonce: number): GuestTracerProgram {
  const script = bpftraceScript({ ownerPid: '$1', nonce, marker, hasTracepoint: hasSyscall });
  return {
    script,
    tracepoints: tracepointsOf(script),
    config: {
      marker,
      nonce,
      env: {
        BPFTRACE_STRLEN: String(BPFTRACE_STRLEN),
        BPFTRACE_PERF_RB_PAGES: String(GUEST_PERF_RB_PAGES),
        BPFTRACE_MAP_KEYS_MAX: String(GUEST_MAP_KEYS_MAX),
      },
    },
  };
}

/** Identifies the program the generator writes today: part of the image version, so a new generator builds a new image. */
export function guestTracerDigest(): string {
  const program = guestTracerProgram(() => true, 'marker', 1);
  return createHash('sha256').update(JSON.stringify(program)).digest('hex');
}

/** Writes the program, its tracepoint list and its settings into the guest root. */
export async function installGuestTracer(root: string, vmlinux: string): Promise<void> {
  const hasSyscall = await kernelSyscalls(vmlinux);
  const program = guestTracerProgram((name) => hasSyscall.has(name), randomBytes(6).toString('base64url'), randomInt(1 << 30, 2 ** 31 - 1));
  const dir = join(root, GUEST_TRACER_DIR);
  await mkdir(dir, { recursive: true });
  await writeFile(join(dir, 'behaviour.bt'), program.script, { mode: 0o600 });
  await writeFile(join(dir, 'tracepoints'), `${program.tracepoints.join('\n')}\n`);
  await writeFile(join(dir, 'tracer.json'), `${JSON.stringify(program.config)}\n`, { mode: 0o600 });
}

/**
 * The system calls the guest kernel has, read from its BTF, which names every `__x64_sys_<call>` entry
 * point; each call defined that way has its syscall tracepoints. (Debian's System.map is a stub.)
 */
export async function kernelSyscalls(vmlinux: string): Promise<Set<string>> {
  const text = (await readFile(vmlinux)).toString('latin1');
  return new Set([...text.matchAll(/\0__x64_sys_([a-z0-9_]+)\0/g)].map((match) => match[1]!));
}
