/*
 * The machine's init, pid 1 of the sample's pid namespace and the sample's parent. Every process the
 * sample leaves behind (daemons, double forks) becomes its child, and it exits only when the last one
 * has: that is how the run "ends once every process of the sample has exited". It exits with the
 * status of the first command. Built static, so it runs in any guest root.
 *
 * Before anything runs, it gives up every capability for good. bubblewrap, running as root of the
 * machine's user namespace, leaves the bounding set full and hands the init CAP_SETPCAP alone, which it
 * needs to empty the bounding set and to lock the securebits that keep root from regaining
 * capabilities. It then drops CAP_SETPCAP too (permitted, effective, inheritable, ambient), so the
 * sample starts with no capability at all, and no_new_privs keeps any exec from granting one.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <linux/capability.h>
#include <linux/securebits.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

/* Above any capability this kernel knows: PR_CAPBSET_DROP answers EINVAL for those. */
#define MAX_CAPABILITY 63

static int drop_every_capability(void) {
  for (int cap = 0; cap <= MAX_CAPABILITY; cap++) {
    if (prctl(PR_CAPBSET_DROP, cap, 0, 0, 0) != 0 && errno != EINVAL) {
      perror("init: PR_CAPBSET_DROP");
      return -1;
    }
  }
  int bits = SECBIT_NOROOT | SECBIT_NOROOT_LOCKED | SECBIT_NO_SETUID_FIXUP | SECBIT_NO_SETUID_FIXUP_LOCKED |
             SECBIT_KEEP_CAPS_LOCKED | SECBIT_NO_CAP_AMBIENT_RAISE | SECBIT_NO_CAP_AMBIENT_RAISE_LOCKED;
  if (prctl(PR_SET_SECUREBITS, bits, 0, 0, 0) != 0) {
    perror("init: PR_SET_SECUREBITS");
    return -1;
  }
  if (prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0) != 0) {
    perror("init: PR_CAP_AMBIENT_CLEAR_ALL");
    return -1;
  }
  struct __user_cap_header_struct header = {_LINUX_CAPABILITY_VERSION_3, 0};
  struct __user_cap_data_struct none[2] = {{0, 0, 0}, {0, 0, 0}};
  if (syscall(SYS_capset, &header, none) != 0) {
    perror("init: capset");
    return -1;
  }
  return 0;
}

int main(int argc, char **argv) {
  if (argc < 2) {
    fprintf(stderr, "usage: init COMMAND [ARG...]\n");
    return 2;
  }
  prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0);
  if (drop_every_capability() != 0) return 125;
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
