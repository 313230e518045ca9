import { createHash } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { mkdir, mkdtemp, rename, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { mustRun } from '../command.js';

/** The monitor's sources in the clone (this file runs from dist/src/machinery/host/tracer/). */
const MONITOR_SOURCES = fileURLToPath(new URL('../../../../../native/monitor/', import.meta.url));
const SOURCE_FILES = ['Makefile', 'compat-calls.h', 'monitor.bpf.c', 'monitor.c', 'monitor.h', 'syscalls-newer.txt'];

/** Where built monitors are kept, one per version of the sources. */
export const MONITOR_BUILD_DIR = '/var/lib/nestbox/monitor';

/**
 * Builds nestbox's monitor (native/monitor: the BPF program against this kernel's BTF, its skeleton
 * and the loader) once per version of its sources into `dir/monitor-<hash>`, and returns its path. The
 * build happens in a folder of its own and the binary is renamed into place, so that concurrent
 * callers and crashed builds never leave a half-written monitor under the final name.
 */
export async function ensureMonitor(dir = MONITOR_BUILD_DIR): Promise<string> {
  const binary = join(dir, `monitor-${monitorSourcesDigest()}`);
  if (existsSync(binary)) return binary;
  await mkdir(dir, { recursive: true });
  const build = await mkdtemp(join(dir, 'build-'));
  try {
    await mustRun(['make', '-s', '-C', MONITOR_SOURCES, `OUT=${build}`], 'building the eBPF monitor (clang, bpftool, libbpf-dev)');
    await rename(join(build, 'monitor'), binary);
  } finally {
    await rm(build, { recursive: true, force: true });
  }
  return binary;
}

/** Identifies the monitor's sources: a new version builds a new monitor (and a new qemu guest image). */
export function monitorSourcesDigest(): string {
  const hash = createHash('sha256');
  for (const file of SOURCE_FILES) hash.update(file).update(readFileSync(join(MONITOR_SOURCES, file)));
  return hash.digest('hex').slice(0, 12);
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  // Setup builds it ahead of the first task: node dist/src/machinery/host/tracer/monitor-build.js
  console.log(await ensureMonitor(process.argv[2]));
}
