/*
 * The supervisor of one task's sample, outside the sandbox. The machine's init (native/init.c) installs a
 * seccomp filter in the sample's first process that turns sleeps, executions, deletions and (with memory
 * dumps) process exits into user notifications, and hands the filter's listener over the socket at fd 3.
 * Every process of the sample inherits the filter. For each notification the supervisor:
 *
 *  - sleeps (nanosleep, clock_nanosleep): answers 0 at once when the sleep is longer than the threshold,
 *    so a sample cannot outwait the analysis; shorter sleeps go on untouched;
 *  - execve, execveat: copies the file about to run into the capture folder, unless it is a file of the
 *    guest root the sample did not change, one nestbox placed before the run, or one of nestbox's own;
 *  - unlink, unlinkat: copies a regular file the sample wrote before it disappears;
 *  - exit_group: asks the service (a line on stdout) to dump the process and waits for its answer.
 *
 * then lets the call go on (SECCOMP_USER_NOTIF_FLAG_CONTINUE). What it did is one JSON line on stdout.
 *
 * Safety. The supervisor resolves sandbox paths with openat2(RESOLVE_IN_ROOT | RESOLVE_NO_MAGICLINKS)
 * against the process's own root, so no symlink or /proc link leads it to a host file; it runs as the
 * machine's root id (an unprivileged host id) with CAP_SYS_PTRACE alone once its folders are open; after reading
 * a process's memory or opening its /proc entries it checks that the notification is still valid, so a
 * pid reused meanwhile is not mistaken for the sample. The kernel answers ENOSYS to pending and later
 * calls if the supervisor dies: the sample never waits on a dead supervisor.
 *
 * Usage: supervisor ROOT_ID MERGED UPPER LOWER OWN_DIR OUT_DIR SLEEP_THRESHOLD_MS MAX_FILE MAX_TOTAL MAX_FILES EXITS FILES
 * (EXITS, FILES: 1 to watch process exits, executions and deletions; 0 not to).
 *
 * In the qemu guest (guest/analyzer/supervision.py) there is no overlay: MERGED, UPPER and LOWER are "-",
 * ROOT_ID is 0, and the sample's files are those it changed since the run began (see changed_before_run).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <grp.h>
#include <inttypes.h>
#include <limits.h>
#include <linux/capability.h>
#include <linux/openat2.h>
#include <linux/seccomp.h>
#include <openssl/evp.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#define CHANNEL_FD 3
#define NR_NANOSLEEP 35
#define NR_EXECVE 59
#define NR_UNLINK 87
#define NR_CLOCK_NANOSLEEP 230
#define NR_EXIT_GROUP 231
#define NR_UNLINKAT 263
#define NR_EXECVEAT 322
#define AT_FDCWD_VALUE (-100)
/* Identities and hashes remembered; past these, files are still captured, only not deduplicated. */
#define MAX_KNOWN 4096
/* Sleep records written; past this many, shortened sleeps are counted. */
#define MAX_SLEEP_RECORDS 200

struct identity {
  dev_t dev;
  ino_t ino;
  off_t size;
  struct timespec mtime, ctime;
};

static struct {
  int listener;
  int upper, lower, out;
  long long threshold_ns;
  long long max_file, max_total, max_files;
  bool exits;
  long long spent;
  long long captured;
  long long sleeps;
  struct identity skip[MAX_KNOWN];
  int skips;
  unsigned char hashes[MAX_KNOWN][32];
  int nhashes;
} state;

static void fail(const char *what) {
  fprintf(stderr, "supervisor: %s: %s\n", what, strerror(errno));
  exit(1);
}

/*
 * A path as a JSON string: quotes, backslashes and control bytes escaped, other bytes as they are, so a
 * UTF-8 name reads back as itself (the service decodes invalid UTF-8 to U+FFFD).
 */
static void json_string(FILE *out, const char *text) {
  fputc('"', out);
  for (const unsigned char *c = (const unsigned char *)text; *c; c++) {
    if (*c == '"' || *c == '\\') fprintf(out, "\\%c", *c);
    else if (*c < 0x20 || *c == 0x7f) fprintf(out, "\\u%04x", *c);
    else fputc(*c, out);
  }
  fputc('"', out);
}

static bool same_identity(const struct identity *a, const struct stat *b) {
  return a->dev == b->st_dev && a->ino == b->st_ino && a->size == b->st_size && a->mtime.tv_sec == b->st_mtim.tv_sec &&
         a->mtime.tv_nsec == b->st_mtim.tv_nsec && a->ctime.tv_sec == b->st_ctim.tv_sec && a->ctime.tv_nsec == b->st_ctim.tv_nsec;
}

static void remember_skip(const struct stat *st) {
  if (state.skips >= MAX_KNOWN) return;
  state.skip[state.skips++] = (struct identity){st->st_dev, st->st_ino, st->st_size, st->st_mtim, st->st_ctim};
}

static bool known_skip(const struct stat *st) {
  for (int i = 0; i < state.skips; i++)
    if (same_identity(&state.skip[i], st)) return true;
  return false;
}

/* ---- Start-up: what is not the sample's ---- */

static int merged_root = -1;

/* Each regular file of the upper layer before the run, as the machine sees it (its identity in the overlay). */
static int note_placed(const char *path, const struct stat *st, int type, struct FTW *ftw) {
  (void)st;
  (void)ftw;
  if (type != FTW_F || !S_ISREG(st->st_mode)) return 0;
  const char *relative = path + strlen("."); /* nftw runs from the upper folder: "./tmp/x" */
  struct stat seen;
  if (fstatat(merged_root, relative[0] == '/' ? relative + 1 : relative, &seen, AT_SYMLINK_NOFOLLOW) == 0) remember_skip(&seen);
  return 0;
}

static void note_placed_files(const char *upper, const char *merged) {
  merged_root = open(merged, O_PATH | O_DIRECTORY | O_CLOEXEC);
  if (merged_root < 0) fail("opening the machine's root");
  int back = open(".", O_PATH | O_DIRECTORY | O_CLOEXEC);
  if (chdir(upper) != 0) fail("entering the upper layer");
  nftw(".", note_placed, 16, FTW_PHYS);
  if (fchdir(back) != 0) fail("leaving the upper layer");
  close(back);
  close(merged_root);
}

/* nestbox's own files bound into the machine (init, resolv.conf...): never the sample's. */
static void note_own_files(const char *dir) {
  int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) fail("opening nestbox's bound files");
  char buffer[4096];
  long got;
  while ((got = syscall(SYS_getdents64, fd, buffer, sizeof buffer)) > 0) {
    for (long at = 0; at < got;) {
      struct {
        uint64_t ino;
        int64_t off;
        unsigned short reclen;
        unsigned char type;
        char name[];
      } *entry = (void *)(buffer + at);
      struct stat st;
      if (fstatat(fd, entry->name, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISREG(st.st_mode)) remember_skip(&st);
      at += entry->reclen;
    }
  }
  close(fd);
}

/*
 * Becomes the machine's root id with one capability left, CAP_SYS_PTRACE: the sample's user namespace
 * belongs to host root, so reading its processes' memory and descriptors needs it even with the same
 * uid. Files are opened with no other privilege than that id's.
 */
static void drop_privileges(uid_t id) {
  for (int cap = 0; cap <= 63; cap++)
    if (cap != CAP_SYS_PTRACE && prctl(PR_CAPBSET_DROP, cap, 0, 0, 0) != 0 && errno != EINVAL) fail("PR_CAPBSET_DROP");
  if (prctl(PR_SET_KEEPCAPS, 1, 0, 0, 0) != 0) fail("PR_SET_KEEPCAPS");
  if (setgroups(0, NULL) != 0 || setresgid(id, id, id) != 0 || setresuid(id, id, id) != 0) fail("dropping privileges");
  struct __user_cap_header_struct header = {_LINUX_CAPABILITY_VERSION_3, 0};
  struct __user_cap_data_struct only[2] = {{1u << CAP_SYS_PTRACE, 1u << CAP_SYS_PTRACE, 0}, {0, 0, 0}};
  if (syscall(SYS_capset, &header, only) != 0) fail("capset");
  if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0) fail("PR_SET_NO_NEW_PRIVS");
}

/* ---- Reading the notified process ---- */

static bool still_valid(uint64_t id) { return ioctl(state.listener, SECCOMP_IOCTL_NOTIF_ID_VALID, &id) == 0; }

static void reply(uint64_t id, bool go_on, long long value) {
  struct seccomp_notif_resp resp = {.id = id, .val = value, .error = 0, .flags = go_on ? SECCOMP_USER_NOTIF_FLAG_CONTINUE : 0};
  /* ENOENT: the process died or a signal interrupted the call meanwhile; nothing waits for the answer. */
  ioctl(state.listener, SECCOMP_IOCTL_NOTIF_SEND, &resp);
}

static bool read_memory(pid_t pid, uint64_t address, void *into, size_t length) {
  struct iovec local = {into, length}, remote = {(void *)(uintptr_t)address, length};
  return process_vm_readv(pid, &local, 1, &remote, 1, 0) == (ssize_t)length;
}

/* A NUL-terminated string of the process, read page by page so that a string ending near a page's end is read. */
static bool read_string(pid_t pid, uint64_t address, char *into, size_t size) {
  size_t have = 0;
  while (have < size - 1) {
    size_t page_left = 4096 - ((address + have) & 4095);
    size_t chunk = page_left < size - 1 - have ? page_left : size - 1 - have;
    if (!read_memory(pid, address + have, into + have, chunk)) return false;
    char *end = memchr(into + have, 0, chunk);
    if (end) return true;
    have += chunk;
  }
  into[size - 1] = 0;
  return false;
}

/* A /proc link of the process as it sees it (its cwd, a descriptor's path). */
static bool proc_link(pid_t pid, const char *what, char *into, size_t size) {
  char path[64];
  snprintf(path, sizeof path, "/proc/%d/%s", pid, what);
  ssize_t length = readlink(path, into, size - 1);
  if (length < 0) return false;
  into[length] = 0;
  return true;
}

/* The number N of a path naming the process's own descriptor N through /proc or /dev/fd; -1 otherwise. */
static int own_descriptor(const char *path) {
  const char *prefixes[] = {"/proc/self/fd/", "/proc/thread-self/fd/", "/dev/fd/"};
  for (size_t i = 0; i < sizeof prefixes / sizeof prefixes[0]; i++) {
    size_t length = strlen(prefixes[i]);
    if (strncmp(path, prefixes[i], length) == 0) {
      char *end;
      long fd = strtol(path + length, &end, 10);
      if (*end == 0 && end != path + length && fd >= 0 && fd < INT_MAX) return (int)fd;
    }
  }
  return -1;
}

static int take_descriptor(pid_t pid, int fd) {
  int pidfd = (int)syscall(SYS_pidfd_open, pid, 0);
  if (pidfd < 0) return -1;
  int taken = (int)syscall(SYS_pidfd_getfd, pidfd, fd, 0);
  close(pidfd);
  return taken;
}

/*
 * Opens (O_PATH) `path` as the process would reach it: from its root, relative to its cwd or a
 * descriptor. No magic link is followed and nothing resolves outside its root.
 */
static int open_in_machine(pid_t pid, int dirfd, const char *path, bool follow_last, char *seen, size_t seen_size) {
  char base[PATH_MAX];
  if (path[0] == '/') snprintf(seen, seen_size, "%s", path);
  else {
    char which[32];
    if (dirfd == AT_FDCWD_VALUE) snprintf(which, sizeof which, "cwd");
    else snprintf(which, sizeof which, "fd/%d", dirfd);
    if (!proc_link(pid, which, base, sizeof base) || base[0] != '/') return -1;
    snprintf(seen, seen_size, "%s/%s", strcmp(base, "/") == 0 ? "" : base, path);
  }
  char root_link[64];
  snprintf(root_link, sizeof root_link, "/proc/%d/root", pid);
  int root = open(root_link, O_PATH | O_DIRECTORY | O_CLOEXEC);
  if (root < 0) return -1;
  struct open_how how = {.flags = O_PATH | O_CLOEXEC | (follow_last ? 0 : O_NOFOLLOW),
                         .resolve = RESOLVE_IN_ROOT | RESOLVE_NO_MAGICLINKS};
  int fd = (int)syscall(SYS_openat2, root, seen, &how, sizeof how);
  close(root);
  return fd;
}

/* ---- The qemu guest: no overlay ---- */

/* When the service said "begin", on the clock file times are stamped with (coarse). */
static struct timespec run_began;

/*
 * The guest's stock and placed files: changed (ctime) before the run began, the rule the guest analyzer
 * uses for dropped files. A sample cannot set a ctime back without setting the clock.
 */
static bool changed_before_run(const struct stat *st) {
  return st->st_ctim.tv_sec < run_began.tv_sec || (st->st_ctim.tv_sec == run_began.tv_sec && st->st_ctim.tv_nsec < run_began.tv_nsec);
}

/* ---- Deciding and capturing ---- */

/* A file of the guest root at the same path, with the same identity: a stock file the sample left alone. */
static bool unchanged_stock_file(const char *path, const struct stat *st) {
  if (state.lower < 0) return changed_before_run(st);
  struct open_how how = {.flags = O_PATH | O_CLOEXEC, .resolve = RESOLVE_IN_ROOT | RESOLVE_NO_MAGICLINKS | RESOLVE_NO_XDEV};
  int fd = (int)syscall(SYS_openat2, state.lower, path, &how, sizeof how);
  if (fd < 0) return false;
  struct stat lower;
  bool same = fstat(fd, &lower) == 0 && lower.st_ino == st->st_ino && lower.st_size == st->st_size &&
              lower.st_mtim.tv_sec == st->st_mtim.tv_sec && lower.st_mtim.tv_nsec == st->st_mtim.tv_nsec;
  close(fd);
  return same;
}

static bool known_hash(const unsigned char *hash) {
  for (int i = 0; i < state.nhashes; i++)
    if (memcmp(state.hashes[i], hash, 32) == 0) return true;
  if (state.nhashes < MAX_KNOWN) memcpy(state.hashes[state.nhashes++], hash, 32);
  return false;
}

/* Copies the first `keep` bytes of `fd` into the capture folder as `name`, hashing the whole file. */
static bool copy_out(int fd, const char *name, long long keep, unsigned char *hash, long long *kept) {
  int out = openat(state.out, name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
  if (out < 0) return false;
  EVP_MD_CTX *context = EVP_MD_CTX_new();
  EVP_DigestInit_ex(context, EVP_sha256(), NULL);
  char buffer[65536];
  ssize_t got;
  long long offset = 0;
  *kept = 0;
  while ((got = pread(fd, buffer, sizeof buffer, offset)) > 0) {
    EVP_DigestUpdate(context, buffer, (size_t)got);
    if (*kept < keep) {
      long long part = keep - *kept < got ? keep - *kept : got;
      if (write(out, buffer, (size_t)part) != part) break;
      *kept += part;
    }
    offset += got;
  }
  EVP_DigestFinal_ex(context, hash, NULL);
  EVP_MD_CTX_free(context);
  close(out);
  return got == 0;
}

static void capture(int path_fd, const char *why, pid_t pid, const char *seen) {
  struct stat st;
  if (fstat(path_fd, &st) != 0 || !S_ISREG(st.st_mode)) return;
  if (known_skip(&st) || unchanged_stock_file(seen, &st)) return;
  if (state.captured >= state.max_files) return;
  char self[64];
  snprintf(self, sizeof self, "/proc/self/fd/%d", path_fd);
  int fd = open(self, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
  if (fd < 0) {
    printf("{\"event\":\"missed\",\"reason\":\"%s\",\"pid\":%d,\"path\":", why, pid);
    json_string(stdout, seen);
    printf(",\"error\":\"%s\"}\n", strerror(errno));
    return;
  }
  char name[32];
  snprintf(name, sizeof name, "%lld.bin", state.captured + 1);
  long long room = state.max_total - state.spent;
  long long keep = st.st_size < state.max_file ? st.st_size : state.max_file;
  if (keep > room) keep = room > 0 ? room : 0;
  unsigned char hash[32];
  long long kept = 0;
  bool whole = copy_out(fd, name, keep, hash, &kept);
  close(fd);
  remember_skip(&st);
  if (!whole || known_hash(hash)) {
    unlinkat(state.out, name, 0);
    return;
  }
  state.captured++;
  state.spent += kept;
  printf("{\"event\":\"capture\",\"reason\":\"%s\",\"pid\":%d,\"path\":", why, pid);
  json_string(stdout, seen);
  printf(",\"file\":\"%s\",\"size\":%lld,\"kept\":%lld,\"sha256\":\"", name, (long long)st.st_size, kept);
  for (int i = 0; i < 32; i++) printf("%02x", hash[i]);
  printf("\"}\n");
}

/* ---- The calls ---- */

static void on_exec(const struct seccomp_notif *n) {
  const __u64 *args = n->data.args;
  bool at = n->data.nr == NR_EXECVEAT;
  int dirfd = at ? (int)args[0] : AT_FDCWD_VALUE;
  int flags = at ? (int)args[4] : 0;
  char path[PATH_MAX], seen[PATH_MAX * 2] = "";
  if (!read_string(n->pid, at ? args[1] : args[0], path, sizeof path)) return;
  /* A program run from a descriptor (a memfd, a file deleted since): taken from the process itself. */
  int from_fd = at && path[0] == 0 && (flags & AT_EMPTY_PATH) ? dirfd : -1;
  int fd = from_fd >= 0 ? -1 : open_in_machine(n->pid, dirfd, path, true, seen, sizeof seen);
  if (fd < 0 && from_fd < 0) from_fd = own_descriptor(seen);
  if (from_fd >= 0) {
    char which[32];
    snprintf(which, sizeof which, "fd/%d", from_fd);
    if (!proc_link(n->pid, which, seen, sizeof seen)) return;
    fd = take_descriptor(n->pid, from_fd);
  }
  /* The pid was the notified process's while the path was read and the file opened. */
  if (fd >= 0 && still_valid(n->id)) capture(fd, "exec", n->pid, seen);
  if (fd >= 0) close(fd);
}

static void on_unlink(const struct seccomp_notif *n) {
  const __u64 *args = n->data.args;
  bool at = n->data.nr == NR_UNLINKAT;
  if (at && (args[2] & AT_REMOVEDIR)) return;
  char path[PATH_MAX], seen[PATH_MAX * 2] = "";
  if (!read_string(n->pid, at ? args[1] : args[0], path, sizeof path)) return;
  int fd = open_in_machine(n->pid, at ? (int)args[0] : AT_FDCWD_VALUE, path, false, seen, sizeof seen);
  if (fd < 0) return;
  if (still_valid(n->id)) capture(fd, "delete", n->pid, seen);
  close(fd);
}

/* Answers a long sleep with 0 at once; returns whether it did. */
static bool on_sleep(const struct seccomp_notif *n) {
  const __u64 *args = n->data.args;
  bool clock = n->data.nr == NR_CLOCK_NANOSLEEP;
  struct timespec asked;
  if (!read_memory(n->pid, clock ? args[2] : args[0], &asked, sizeof asked)) return false;
  long long ns = (long long)asked.tv_sec * 1000000000LL + asked.tv_nsec;
  if (clock && (args[1] & TIMER_ABSTIME)) {
    struct timespec now;
    if (clock_gettime((clockid_t)args[0], &now) != 0) return false;
    ns -= (long long)now.tv_sec * 1000000000LL + now.tv_nsec;
  }
  if (asked.tv_sec < 0 || ns <= state.threshold_ns || !still_valid(n->id)) return false;
  reply(n->id, false, 0);
  if (++state.sleeps <= MAX_SLEEP_RECORDS)
    printf("{\"event\":\"sleep\",\"pid\":%d,\"call\":\"%s\",\"seconds\":%.3f,\"time\":%lld}\n", n->pid,
           clock ? "clock_nanosleep" : "nanosleep", (double)ns / 1e9, (long long)time(NULL));
  return true;
}

/* The service dumps the process while it waits here; any line on stdin is its answer. */
static void on_exit_group(const struct seccomp_notif *n) {
  if (!still_valid(n->id)) return;
  printf("{\"event\":\"exit\",\"pid\":%d}\n", n->pid);
  fflush(stdout);
  char line[64];
  if (!fgets(line, sizeof line, stdin)) state.exits = false;
}

static void handle(const struct seccomp_notif *n) {
  switch (n->data.nr) {
    case NR_NANOSLEEP:
    case NR_CLOCK_NANOSLEEP:
      if (on_sleep(n)) return;
      break;
    case NR_EXECVE:
    case NR_EXECVEAT:
      on_exec(n);
      break;
    case NR_UNLINK:
    case NR_UNLINKAT:
      on_unlink(n);
      break;
    case NR_EXIT_GROUP:
      if (state.exits) on_exit_group(n);
      break;
  }
  reply(n->id, true, 0);
}

/* ---- Start-up and loop ---- */

/* The order native/init.c reads: which calls besides sleeps to watch (1 exits, 2 executions and deletions). */
static int receive_listener(bool exits, bool files) {
  unsigned char order = (exits ? 1 : 0) | (files ? 2 : 0);
  char byte;
  /* The machine speaks first (see native/init.c); it closes its end if the sandbox is stopped before. */
  if (read(CHANNEL_FD, &byte, 1) != 1) return -1;
  if (write(CHANNEL_FD, &order, 1) != 1) fail("writing to the machine");
  struct iovec iov = {&byte, 1};
  union {
    struct cmsghdr header;
    char space[CMSG_SPACE(sizeof(int))];
  } control;
  struct msghdr message = {.msg_iov = &iov, .msg_iovlen = 1, .msg_control = control.space, .msg_controllen = sizeof control.space};
  if (recvmsg(CHANNEL_FD, &message, MSG_CMSG_CLOEXEC) != 1) return -1;
  struct cmsghdr *cmsg = CMSG_FIRSTHDR(&message);
  if (!cmsg || cmsg->cmsg_type != SCM_RIGHTS || cmsg->cmsg_len != CMSG_LEN(sizeof(int))) return -1;
  int fd;
  memcpy(&fd, CMSG_DATA(cmsg), sizeof fd);
  return fd;
}

static long long number(const char *text) {
  char *end;
  long long value = strtoll(text, &end, 10);
  if (*end != 0 || value < 0) {
    fprintf(stderr, "supervisor: not a number: %s\n", text);
    exit(2);
  }
  return value;
}

static int open_dir(const char *path) {
  int fd = open(path, O_PATH | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) fail(path);
  return fd;
}

int main(int argc, char **argv) {
  if (argc != 13) {
    fprintf(stderr, "usage: supervisor ROOT_ID MERGED UPPER LOWER OWN_DIR OUT_DIR SLEEP_THRESHOLD_MS MAX_FILE MAX_TOTAL MAX_FILES EXITS FILES\n");
    return 2;
  }
  signal(SIGPIPE, SIG_IGN);
  setvbuf(stdout, NULL, _IOLBF, 0);
  state.threshold_ns = number(argv[7]) * 1000000LL;
  state.max_file = number(argv[8]);
  state.max_total = number(argv[9]);
  state.max_files = number(argv[10]);
  state.exits = number(argv[11]) != 0;
  /* Started ahead, with the machine: the service says when the machine holds the sample, before it runs. */
  char line[64];
  if (!fgets(line, sizeof line, stdin)) return 0;
  clock_gettime(CLOCK_REALTIME_COARSE, &run_began);
  bool guest = strcmp(argv[4], "-") == 0;
  if (!guest) note_placed_files(argv[3], argv[2]);
  note_own_files(argv[5]);
  state.lower = guest ? -1 : open_dir(argv[4]);
  state.out = open(argv[6], O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (state.out < 0) fail("opening the capture folder");
  drop_privileges((uid_t)number(argv[1]));
  state.listener = receive_listener(state.exits, number(argv[12]) != 0);
  if (state.listener < 0) {
    fprintf(stderr, "supervisor: the machine handed over no listener\n");
    return 3;
  }
  char ack = 'A';
  if (write(CHANNEL_FD, &ack, 1) != 1) fail("answering the machine");
  close(CHANNEL_FD);
  printf("{\"event\":\"ready\"}\n");
  for (;;) {
    struct pollfd wait = {state.listener, POLLIN, 0};
    if (poll(&wait, 1, -1) < 0) {
      if (errno == EINTR) continue;
      fail("poll");
    }
    /* Every process of the sample is gone: the filter has no user left. */
    if (wait.revents & POLLHUP) return 0;
    struct seccomp_notif notif;
    memset(&notif, 0, sizeof notif);
    if (ioctl(state.listener, SECCOMP_IOCTL_NOTIF_RECV, &notif) != 0) {
      if (errno == EINTR || errno == ENOENT) continue;
      fail("receiving a notification");
    }
    handle(&notif);
  }
}
