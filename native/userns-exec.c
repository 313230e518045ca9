/*
 * nestbox-userns-exec BASE COUNT COMMAND [ARG...]
 *
 * Runs COMMAND as uid 0 and gid 0 of a new user namespace in which ids 0 to COUNT-1 are the host ids
 * BASE to BASE+COUNT-1. The machine's root is then an unprivileged host user: files under /proc/sys,
 * and everything else the kernel guards by "is this the host's root", refuse it, whatever
 * capabilities it holds inside.
 *
 * bubblewrap maps a single id when it makes the user namespace itself, so a sample could not own files
 * as any other user; this launcher maps the whole range and bubblewrap then runs inside it without
 * --unshare-user.
 *
 * It must be started by host root: only a process holding CAP_SETUID and CAP_SETGID in the parent user
 * namespace may write a map of more than its own id, and a namespace cannot write its own map. So a
 * forked helper, still in the parent namespace, writes the maps of this process once it has unshared.
 *
 * It also sets user.max_user_namespaces to 0 inside the new namespace: no nested user namespace can be
 * made below it (the seccomp filter refuses them too; bubblewrap's --disable-userns needs
 * --unshare-user, which this replaces).
 *
 * Exit status: COMMAND's (it is exec'd: the pid stays the same), or 125 when the namespace cannot be
 * set up, or 127 when COMMAND cannot be run.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#define SETUP_FAILED 125
#define EXEC_FAILED 127
/* The largest valid id is 2^32 - 2: (uid_t) -1 means "no change" to the kernel. */
#define LAST_VALID_ID 4294967294UL

static int fail(const char *what) {
  fprintf(stderr, "nestbox-userns-exec: %s: %s\n", what, strerror(errno));
  return SETUP_FAILED;
}

static int parse_id(const char *text, unsigned long *value) {
  char *end = NULL;
  errno = 0;
  unsigned long parsed = strtoul(text, &end, 10);
  if (errno != 0 || end == text || *end != '\0' || text[0] == '-' || parsed > LAST_VALID_ID) return -1;
  *value = parsed;
  return 0;
}

static int write_text(const char *path, const char *text) {
  int fd = open(path, O_WRONLY | O_CLOEXEC);
  if (fd < 0) return -1;
  ssize_t length = (ssize_t)strlen(text);
  ssize_t written = write(fd, text, (size_t)length);
  int saved = errno;
  close(fd);
  errno = saved;
  return written == length ? 0 : -1;
}

/* Runs in the helper: writes the uid and gid maps of the launcher, which has unshared by then. */
static int write_maps(pid_t launcher, unsigned long base, unsigned long count) {
  char map[64], path[64];
  snprintf(map, sizeof map, "0 %lu %lu\n", base, count);
  const char *files[] = {"uid_map", "gid_map"};
  for (int i = 0; i < 2; i++) {
    snprintf(path, sizeof path, "/proc/%d/%s", (int)launcher, files[i]);
    if (write_text(path, map) != 0) {
      fprintf(stderr, "nestbox-userns-exec: writing %s: %s\n", files[i], strerror(errno));
      return -1;
    }
  }
  return 0;
}

static void run_helper(pid_t launcher, int from_launcher, int to_launcher, unsigned long base, unsigned long count) {
  char go = 0;
  if (read(from_launcher, &go, 1) != 1) _exit(1);
  char answer = write_maps(launcher, base, count) == 0 ? 'y' : 'n';
  if (write(to_launcher, &answer, 1) != 1) _exit(1);
  _exit(answer == 'y' ? 0 : 1);
}

/* Unshares, has the helper write the maps, and waits for it. */
static int enter_mapped_namespace(pid_t helper, int to_helper, int from_helper) {
  if (unshare(CLONE_NEWUSER) != 0) return fail("unshare(CLONE_NEWUSER)");
  char answer = 'n';
  if (write(to_helper, "g", 1) != 1 || read(from_helper, &answer, 1) != 1) answer = 'n';
  int status = 0;
  while (waitpid(helper, &status, 0) < 0 && errno == EINTR) {
  }
  if (answer != 'y') {
    fprintf(stderr, "nestbox-userns-exec: the id maps were not written\n");
    return SETUP_FAILED;
  }
  return 0;
}

/* Becomes root of the namespace, without the host's supplementary groups (root's group among them). */
static int become_namespace_root(void) {
  if (setgroups(0, NULL) != 0) return fail("setgroups");
  if (setresgid(0, 0, 0) != 0) return fail("setresgid");
  if (setresuid(0, 0, 0) != 0) return fail("setresuid");
  if (write_text("/proc/sys/user/max_user_namespaces", "0\n") != 0) return fail("user.max_user_namespaces");
  return 0;
}

int main(int argc, char **argv) {
  unsigned long base = 0, count = 0;
  if (argc < 4 || parse_id(argv[1], &base) != 0 || parse_id(argv[2], &count) != 0) {
    fprintf(stderr, "usage: nestbox-userns-exec BASE COUNT COMMAND [ARG...]\n");
    return 2;
  }
  if (base == 0 || count == 0 || count > LAST_VALID_ID - base + 1) {
    fprintf(stderr, "nestbox-userns-exec: the range %lu+%lu is not a range of unprivileged host ids\n", base, count);
    return 2;
  }
  int to_helper[2], from_helper[2];
  if (pipe2(to_helper, O_CLOEXEC) != 0 || pipe2(from_helper, O_CLOEXEC) != 0) return fail("pipe");
  pid_t launcher = getpid();
  pid_t helper = fork();
  if (helper < 0) return fail("fork");
  if (helper == 0) run_helper(launcher, to_helper[0], from_helper[1], base, count);
  close(to_helper[0]);
  close(from_helper[1]);
  int entered = enter_mapped_namespace(helper, to_helper[1], from_helper[0]);
  if (entered != 0) {
    kill(helper, SIGKILL);
    return entered;
  }
  close(to_helper[1]);
  close(from_helper[0]);
  int became = become_namespace_root();
  if (became != 0) return became;
  execvp(argv[3], argv + 3);
  fprintf(stderr, "nestbox-userns-exec: cannot run %s: %s\n", argv[3], strerror(errno));
  return EXEC_FAILED;
}
