import { createHash } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdir, rename, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { mustRun } from './command.js';

/** Where the init appears inside the machine: bound over an empty file of the guest root, as pid 1. */
export const GUEST_INIT_PATH = '/sbin/init';
/** The same file without links on the way (/sbin is a link to usr/sbin): where the host checks it. */
export const GUEST_INIT_REAL_PATH = '/usr/sbin/init';

/**
 * The machine's init, pid 1 of the sample's pid namespace and the sample's parent. Every process the
 * sample leaves behind (daemons, double forks) becomes its child, and it exits only when the last one
 * has: that is how the run "ends once every process of the sample has exited". It exits
 * with the status of the first command. Static, so it runs in any guest root.
 */
export const GUEST_INIT_SOURCE = String.raw`
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

int main(int argc, char **argv) {
  if (argc < 2) {
    fprintf(stderr, "usage: init COMMAND [ARG...]\n");
    return 2;
  }
  prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0);
  pid_t first = fork();
  if (first < 0) {
    perror("init: fork");
    return 125;
  }
  if (first == 0) {
    execvp(argv[1], argv + 1);
    fprintf(stderr, "init: cannot run %s: %s\n", argv[1], strerror(errno));
    _exit(127);
  }
  int status = 0, first_status = 0;
  for (;;) {
    pid_t pid = wait(&status);
    if (pid < 0 && errno == EINTR) continue;
    if (pid < 0) break;
    if (pid == first) first_status = status;
  }
  if (WIFSIGNALED(first_status)) return 128 + WTERMSIG(first_status);
  return WEXITSTATUS(first_status);
}
`;

/**
 * Compiles the init with the host's C compiler, once per source version, into `dir/init-<hash>`, and
 * returns its path. Built beside the guest roots rather than into them, so changing it costs no rebuild.
 */
export async function ensureGuestInit(dir: string): Promise<string> {
  const hash = createHash('sha256').update(GUEST_INIT_SOURCE).digest('hex').slice(0, 12);
  const binary = join(dir, `init-${hash}`);
  if (existsSync(binary)) return binary;
  await mkdir(dir, { recursive: true });
  const building = `${binary}.${process.pid}`;
  await writeFile(`${building}.c`, GUEST_INIT_SOURCE);
  try {
    await mustRun(['gcc', '-O2', '-static', '-o', building, `${building}.c`], 'compiling the machine init');
    await rename(building, binary);
  } finally {
    await rm(`${building}.c`, { force: true });
    await rm(building, { force: true });
  }
  return binary;
}
