/*
 * The supervisor of one task's sample, outside the sandbox. The machine's init (native/init.c) installs a
 * seccomp filter in the sample's first process that turns sleeps, timers, waits, executions, deletions and
 * (with memory dumps) process exits, of both ABIs (native/supervised-calls.h), into user notifications, and
 * hands the filter's listener over the socket at fd 3. Every process of the sample inherits the filter. An
 * i386 call is handled under its x86_64 number. For each notification the supervisor:
 *
 *  - sleeps (nanosleep, clock_nanosleep): answers 0 at once when the sleep is longer than the threshold,
 *    so a sample cannot outwait the analysis; shorter sleeps go on untouched;
 *  - timers (alarm, setitimer, timer_settime, timerfd_settime) and waits (select, poll, epoll_wait and
 *    their variants) past the threshold: see "Timers and waits" below;
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
 * (EXITS, FILES: 1 to watch process exits, executions and deletions (with timers and waits); 0 not to).
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
#include <sys/timerfd.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>
#include "supervised-calls.h"

#define CHANNEL_FD 3
#define NR_NANOSLEEP 35
#define NR_EXECVE 59
#define NR_UNLINK 87
#define NR_CLOCK_NANOSLEEP 230
#define NR_EXIT_GROUP 231
#define NR_UNLINKAT 263
#define NR_EXECVEAT 322
#define NR_POLL 7
#define NR_SELECT 23
#define NR_ALARM 37
#define NR_SETITIMER 38
#define NR_TIMER_SETTIME 223
#define NR_EPOLL_WAIT 232
#define NR_PSELECT6 270
#define NR_PPOLL 271
#define NR_EPOLL_PWAIT 281
#define NR_TIMERFD_SETTIME 286
#define NR_EPOLL_PWAIT2 441
#define AT_FDCWD_VALUE (-100)
/* Identities and hashes remembered; past these, files are still captured, only not deduplicated. */
#define MAX_KNOWN 4096
/* Sleep records written; past this many, shortened sleeps are counted by process and call. */
#define MAX_SLEEP_RECORDS 200
/* Processes and calls counted past the records; calls of any more are counted under process 0. */
#define MAX_UNRECORDED 256

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

/* ---- Timers and waits (and i386 calls) ---- */

/* A call's x86_64 number, and whether its time structs have 32-bit fields; 0 for a call not watched. */
static int native_number(const struct seccomp_notif *n, bool *time32) {
  *time32 = false;
  for (size_t i = 0; i < SUPERVISED_CALL_COUNT; i++) {
    const struct supervised_call *call = &SUPERVISED_CALLS[i];
    if (call->arch == n->data.arch && call->nr == n->data.nr) {
      *time32 = call->time32;
      return call->as;
    }
  }
  return 0;
}

static const char *wait_or_timer_name(int nr) {
  switch (nr) {
    case NR_ALARM: return "alarm";
    case NR_SETITIMER: return "setitimer";
    case NR_TIMER_SETTIME: return "timer_settime";
    case NR_TIMERFD_SETTIME: return "timerfd_settime";
    case NR_SELECT: return "select";
    case NR_PSELECT6: return "pselect6";
    case NR_POLL: return "poll";
    case NR_PPOLL: return "ppoll";
    case NR_EPOLL_WAIT: return "epoll_wait";
    case NR_EPOLL_PWAIT: return "epoll_pwait";
    default: return "epoll_pwait2";
  }
}

static pid_t thread_group(pid_t pid);
static long long now_ns(clockid_t clock);

/* Shortened calls past the records, by process and call (`call` is one of the calls' fixed names). */
static struct unrecorded {
  pid_t pid;
  const char *call;
  long long count;
} unrecorded[MAX_UNRECORDED + 1];
static int nunrecorded;

static void count_unrecorded(pid_t pid, const char *call) {
  int i = 0;
  while (i < nunrecorded && (unrecorded[i].pid != pid || strcmp(unrecorded[i].call, call) != 0)) i++;
  if (i == nunrecorded) {
    if (nunrecorded == MAX_UNRECORDED) pid = 0, i = MAX_UNRECORDED, call = "";
    else nunrecorded++;
    unrecorded[i].pid = pid;
    unrecorded[i].call = call;
  }
  unrecorded[i].count++;
}

/* At the end: what was counted past the records, so that the report counts every shortened call. */
static void report_unrecorded(void) {
  for (int i = 0; i <= MAX_UNRECORDED; i++) {
    if (unrecorded[i].count == 0) continue;
    printf("{\"event\":\"unrecorded\",\"pid\":%d,\"call\":\"%s\",\"count\":%lld}\n", unrecorded[i].pid, unrecorded[i].call, unrecorded[i].count);
  }
  fflush(stdout);
}

/*
 * Recorded under the thread's process, as the report lists processes (apistats counts a call the
 * supervisor answered there: it never reached the tracer). Called while the thread still waits on the
 * notification, before the answer, so that its /proc entry is there to read.
 */
static void record_shortened(pid_t tid, const char *call, long long asked_ns) {
  pid_t pid = thread_group(tid);
  if (++state.sleeps > MAX_SLEEP_RECORDS) {
    count_unrecorded(pid > 0 ? pid : tid, call);
    return;
  }
  // The time to the microsecond, on the clock the tracer's records use: processing puts the call among them.
  printf("{\"event\":\"sleep\",\"pid\":%d,\"call\":\"%s\",\"seconds\":%.3f,\"time\":%.6f}\n", pid > 0 ? pid : tid, call,
         (double)asked_ns / 1e9, (double)now_ns(CLOCK_REALTIME) / 1e9);
}

static long long now_ns(clockid_t clock) {
  struct timespec now;
  if (clock_gettime(clock, &now) != 0) return -1;
  return (long long)now.tv_sec * 1000000000LL + now.tv_nsec;
}

/* A long timer's first expiry becomes this: soon, yet after the call has returned and the sample waits. */
static long long shortened_timer_ns(void) {
  if (state.threshold_ns >= 1000000000LL) return 1000000000LL;
  return state.threshold_ns > 1000000 ? state.threshold_ns : 1000000;
}

static size_t time_size(bool time32) { return time32 ? 8 : 16; }

/* A timespec (or, `micro`, a timeval) of either layout as nanoseconds; -1 when the kernel would refuse it. */
static long long time_ns(const unsigned char *raw, bool time32, bool micro) {
  int64_t seconds, fraction;
  if (time32) {
    int32_t fields[2];
    memcpy(fields, raw, sizeof fields);
    seconds = fields[0], fraction = fields[1];
  } else {
    int64_t fields[2];
    memcpy(fields, raw, sizeof fields);
    seconds = fields[0], fraction = fields[1];
  }
  if (seconds < 0 || fraction < 0 || fraction >= (micro ? 1000000 : 1000000000)) return -1;
  if (seconds > 1000000000) seconds = 1000000000; /* some 31 years: forever, for an analysis */
  return seconds * 1000000000LL + fraction * (micro ? 1000 : 1);
}

static void put_time(unsigned char *raw, long long ns, bool time32, bool micro) {
  int64_t seconds = ns / 1000000000LL, fraction = (ns % 1000000000LL) / (micro ? 1000 : 1);
  if (time32) {
    int32_t fields[2] = {(int32_t)seconds, (int32_t)fraction};
    memcpy(raw, fields, sizeof fields);
  } else {
    int64_t fields[2] = {seconds, fraction};
    memcpy(raw, fields, sizeof fields);
  }
}

/*
 * The process's memory, to read its arguments and write what the call answers. Opened before the
 * notification is checked still valid, the file stays bound to that process even if its pid is reused.
 */
static int open_memory(pid_t pid) {
  char path[64];
  snprintf(path, sizeof path, "/proc/%d/mem", pid);
  return open(path, O_RDWR | O_CLOEXEC);
}

static bool mem_read(int mem, uint64_t address, void *into, size_t length) {
  return pread(mem, into, length, (off_t)address) == (ssize_t)length;
}

static bool mem_write(int mem, uint64_t address, const void *from, size_t length) {
  return pwrite(mem, from, length, (off_t)address) == (ssize_t)length;
}

static bool read_time(int mem, uint64_t address, bool time32, bool micro, long long *ns) {
  unsigned char raw[16];
  if (!mem_read(mem, address, raw, time_size(time32))) return false;
  *ns = time_ns(raw, time32, micro);
  return *ns >= 0;
}

static bool write_time(int mem, uint64_t address, bool time32, bool micro, long long ns) {
  unsigned char raw[16];
  put_time(raw, ns, time32, micro);
  return mem_write(mem, address, raw, time_size(time32));
}

/* A descriptor of the process (a thread's too), or -1. */
static int take_thread_descriptor(pid_t pid, int fd) {
  int pidfd = (int)syscall(SYS_pidfd_open, pid, 0);
  if (pidfd < 0) pidfd = (int)syscall(SYS_pidfd_open, pid, O_EXCL /* PIDFD_THREAD */);
  if (pidfd < 0) return -1;
  int taken = (int)syscall(SYS_pidfd_getfd, pidfd, fd, 0);
  close(pidfd);
  return taken;
}

/* A number after `key` in a /proc file of key/value lines, after the line `after` when given; -1 if none. */
static long long proc_number(const char *path, const char *after, const char *key) {
  FILE *file = fopen(path, "re");
  if (!file) return -1;
  char line[256];
  bool found = after == NULL;
  long long value = -1;
  while (fgets(line, sizeof line, file)) {
    if (!found) found = strcmp(line, after) == 0;
    else if (strncmp(line, key, strlen(key)) == 0) {
      value = strtoll(line + strlen(key), NULL, 10);
      break;
    }
  }
  fclose(file);
  return value;
}

static pid_t thread_group(pid_t pid) {
  char path[64];
  snprintf(path, sizeof path, "/proc/%d/status", pid);
  return (pid_t)proc_number(path, NULL, "Tgid:");
}

/*
 * --- alarm: the call goes on (the kernel arms the long alarm, the tracer sees it), and the supervisor
 * sends the SIGALRM itself once the shortened delay is over ---
 */

#define MAX_ALARMS 64

static struct shortened_alarm {
  pid_t tgid;
  int pidfd; /* -1: free */
  long long deadline;
} alarms[MAX_ALARMS];

static void init_alarms(void) {
  for (int i = 0; i < MAX_ALARMS; i++) alarms[i].pidfd = -1;
}

static void drop_alarm(struct shortened_alarm *alarm) {
  close(alarm->pidfd);
  alarm->pidfd = -1;
}

/* Drops the pending shortened alarm of a process (a new alarm or ITIMER_REAL replaces it), and those of processes gone. */
static void drop_alarms_of(pid_t tgid) {
  for (int i = 0; i < MAX_ALARMS; i++) {
    if (alarms[i].pidfd < 0) continue;
    struct pollfd exited = {alarms[i].pidfd, POLLIN, 0};
    if (alarms[i].tgid == tgid || poll(&exited, 1, 0) != 0) drop_alarm(&alarms[i]);
  }
}

static void on_alarm(const struct seccomp_notif *n) {
  long long asked = (long long)(unsigned)n->data.args[0] * 1000000000LL;
  pid_t tgid = thread_group(n->pid);
  if (tgid <= 0) return;
  drop_alarms_of(tgid);
  if (asked <= state.threshold_ns) return;
  struct shortened_alarm *free_slot = NULL;
  for (int i = 0; !free_slot && i < MAX_ALARMS; i++)
    if (alarms[i].pidfd < 0) free_slot = &alarms[i];
  /* With that many processes holding an alarm, this one waits as asked. */
  int pidfd = free_slot ? (int)syscall(SYS_pidfd_open, tgid, 0) : -1;
  if (pidfd < 0) return;
  if (!still_valid(n->id)) {
    close(pidfd);
    return;
  }
  *free_slot = (struct shortened_alarm){tgid, pidfd, now_ns(CLOCK_MONOTONIC) + shortened_timer_ns()};
  record_shortened(n->pid, "alarm", asked);
}

static void fire_alarms(long long now) {
  for (int i = 0; i < MAX_ALARMS; i++) {
    if (alarms[i].pidfd < 0 || alarms[i].deadline > now) continue;
    syscall(SYS_pidfd_send_signal, alarms[i].pidfd, SIGALRM, NULL, 0);
    drop_alarm(&alarms[i]);
  }
}

/* --- setitimer, timer_settime: the first expiry is rewritten in the process before the kernel reads it --- */

/*
 * The it_value of the itimerval/itimerspec at `address` (after its it_interval), when longer than the
 * threshold, becomes the shortened expiry (for an absolute one, `clock`'s now plus that); the call then
 * goes on with it. `clock` < 0: relative.
 */
static void shorten_in_place(const struct seccomp_notif *n, uint64_t address, bool time32, bool micro, clockid_t clock, const char *call) {
  int mem = open_memory(n->pid);
  if (mem < 0) return;
  uint64_t value = address + time_size(time32);
  long long asked, base = 0;
  if (read_time(mem, value, time32, micro, &asked) && asked > 0 && still_valid(n->id)) {
    if (clock >= 0) base = now_ns(clock);
    if (base >= 0 && asked - base > state.threshold_ns && write_time(mem, value, time32, micro, base + shortened_timer_ns()))
      record_shortened(n->pid, call, asked - base);
  }
  close(mem);
}

static void on_setitimer(const struct seccomp_notif *n, bool time32) {
  if (n->data.args[0] != 0 /* ITIMER_REAL */ || n->data.args[1] == 0) return;
  /* It replaces the process's alarm, a shortened one too. */
  pid_t tgid = thread_group(n->pid);
  if (tgid > 0) drop_alarms_of(tgid);
  shorten_in_place(n, n->data.args[1], time32, true, -1, "setitimer");
}

/* The clock of a POSIX timer of the process (/proc/PID/timers), or -1. */
static clockid_t posix_timer_clock(pid_t pid, int timer) {
  char path[64], after[32];
  snprintf(path, sizeof path, "/proc/%d/timers", pid);
  snprintf(after, sizeof after, "ID: %d\n", timer);
  return (clockid_t)proc_number(path, after, "ClockID:");
}

static void on_timer_settime(const struct seccomp_notif *n, bool time32) {
  const __u64 *args = n->data.args;
  if (args[2] == 0) return;
  clockid_t clock = -1;
  if ((int)args[1] & TIMER_ABSTIME) {
    clock = posix_timer_clock(n->pid, (int)args[0]);
    if (clock < 0) return;
  }
  shorten_in_place(n, args[2], time32, false, clock, "timer_settime");
}

/*
 * timerfd_settime: the supervisor sets the sample's timer itself, through a copy of its descriptor, with
 * the shortened expiry, and answers with the old value: the sample's memory keeps what it passed.
 */
static bool on_timerfd_settime(const struct seccomp_notif *n, bool time32) {
  const __u64 *args = n->data.args;
  int flags = (int)args[1];
  size_t size = time_size(time32);
  int mem = open_memory(n->pid);
  if (mem < 0) return false;
  int timer = take_thread_descriptor(n->pid, (int)args[0]);
  unsigned char raw[32];
  bool answered = false;
  if (timer >= 0 && args[2] != 0 && mem_read(mem, args[2], raw, 2 * size) && still_valid(n->id)) {
    char info[64];
    snprintf(info, sizeof info, "/proc/self/fdinfo/%d", timer);
    clockid_t clock = (clockid_t)proc_number(info, NULL, "clockid:");
    long long interval = time_ns(raw, time32, false), asked = time_ns(raw + size, time32, false);
    long long base = clock >= 0 && (flags & TFD_TIMER_ABSTIME) ? now_ns(clock) : 0;
    struct itimerspec wanted = {{interval / 1000000000LL, interval % 1000000000LL}, {0, 0}}, old;
    long long expiry = base + shortened_timer_ns();
    wanted.it_value = (struct timespec){expiry / 1000000000LL, expiry % 1000000000LL};
    if (clock >= 0 && interval >= 0 && asked > 0 && base >= 0 && asked - base > state.threshold_ns &&
        timerfd_settime(timer, flags, &wanted, &old) == 0) {
      if (args[3] != 0) {
        put_time(raw, (long long)old.it_interval.tv_sec * 1000000000LL + old.it_interval.tv_nsec, time32, false);
        put_time(raw + size, (long long)old.it_value.tv_sec * 1000000000LL + old.it_value.tv_nsec, time32, false);
        mem_write(mem, args[3], raw, 2 * size);
      }
      record_shortened(n->pid, "timerfd_settime", asked - base);
      reply(n->id, false, 0);
      answered = true;
    }
  }
  if (timer >= 0) close(timer);
  close(mem);
  return answered;
}

/*
 * --- select, pselect6, poll, ppoll, epoll_wait, epoll_pwait(2): a wait longer than the threshold lasts the
 * threshold at most. With nothing to wait on it ends at once. Otherwise the supervisor holds the call and
 * watches copies of the sample's descriptors: once one is ready the call goes on (the kernel then answers
 * it at once, as it would have); at the threshold it is answered as a timeout. ---
 */

#define MAX_WAITS 32
#define MAX_WAIT_FDS 64
/* select's sets past this many descriptors: the wait goes on untouched. */
#define MAX_SELECT_FDS 1024

static struct held_wait {
  bool used;
  struct seccomp_notif n; /* under its x86_64 number */
  bool time32;
  int mem;
  int count;
  struct pollfd fds[MAX_WAIT_FDS]; /* the process's descriptors, then the copies */
  long long asked, deadline;
} waits[MAX_WAITS];

/* The wait's timeout (-1: none or forever) and the descriptors it waits on; false if it is not to be touched. */
static bool wait_request(const struct seccomp_notif *n, bool time32, int mem, long long *asked, struct pollfd *fds, int *count) {
  const __u64 *args = n->data.args;
  int nr = n->data.nr;
  *asked = -1;
  *count = 0;
  if (nr == NR_SELECT || nr == NR_PSELECT6) {
    int nfds = (int)args[0];
    if (nfds < 0 || nfds > MAX_SELECT_FDS) return false;
    if (args[4] && !read_time(mem, args[4], time32, nr == NR_SELECT, asked)) return false;
    static const short events[3] = {POLLIN, POLLOUT, POLLPRI};
    for (int set = 0; set < 3; set++) {
      unsigned char bits[MAX_SELECT_FDS / 8];
      if (!args[1 + set] || nfds == 0) continue;
      if (!mem_read(mem, args[1 + set], bits, (size_t)(nfds + 7) / 8)) return false;
      for (int fd = 0; fd < nfds; fd++) {
        if (!(bits[fd / 8] & (1 << (fd % 8)))) continue;
        if (*count == MAX_WAIT_FDS) return false;
        fds[(*count)++] = (struct pollfd){fd, events[set], 0};
      }
    }
    return true;
  }
  if (nr == NR_POLL || nr == NR_PPOLL) {
    unsigned nfds = (unsigned)args[1];
    struct pollfd asked_fds[MAX_WAIT_FDS];
    if (nfds > MAX_WAIT_FDS || (nfds && !mem_read(mem, args[0], asked_fds, nfds * sizeof(struct pollfd)))) return false;
    if (nr == NR_POLL && (int)args[2] >= 0) *asked = (long long)(int)args[2] * 1000000LL;
    if (nr == NR_PPOLL && args[2] && !read_time(mem, args[2], time32, false, asked)) return false;
    for (unsigned i = 0; i < nfds; i++)
      if (asked_fds[i].fd >= 0) fds[(*count)++] = (struct pollfd){asked_fds[i].fd, asked_fds[i].events, 0};
    return true;
  }
  if (nr == NR_EPOLL_PWAIT2) {
    if (args[3] && !read_time(mem, args[3], false, false, asked)) return false;
  } else if ((int)args[3] >= 0) *asked = (long long)(int)args[3] * 1000000LL;
  fds[(*count)++] = (struct pollfd){(int)args[0], POLLIN, 0};
  return true;
}

/* An epoll instance watching nothing (its fdinfo lists no "tfd:"). */
static bool empty_epoll(int fd) {
  char info[64], line[256];
  snprintf(info, sizeof info, "/proc/self/fdinfo/%d", fd);
  FILE *file = fopen(info, "re");
  if (!file) return false;
  bool watched = false;
  while (fgets(line, sizeof line, file))
    if (strncmp(line, "tfd:", 4) == 0) watched = true;
  fclose(file);
  return !watched;
}

/* Answers a held (or never held) wait as the kernel answers a timeout: nothing ready, no time left. */
static void time_out(const struct seccomp_notif *n, bool time32, int mem) {
  const __u64 *args = n->data.args;
  int nr = n->data.nr;
  if (nr == NR_SELECT || nr == NR_PSELECT6) {
    size_t word = n->data.arch == AUDIT_ARCH_I386 ? 4 : 8, nfds = (size_t)(int)args[0];
    unsigned char zero[MAX_SELECT_FDS / 8] = {0};
    for (int set = 1; set <= 3; set++)
      if (args[set] && nfds) mem_write(mem, args[set], zero, (nfds + 8 * word - 1) / (8 * word) * word);
    if (args[4]) write_time(mem, args[4], time32, nr == NR_SELECT, 0);
  }
  if (nr == NR_POLL || nr == NR_PPOLL) {
    short none = 0;
    for (unsigned i = 0; i < (unsigned)args[1]; i++) mem_write(mem, args[0] + i * sizeof(struct pollfd) + offsetof(struct pollfd, revents), &none, sizeof none);
    if (nr == NR_PPOLL && args[2]) write_time(mem, args[2], time32, false, 0);
  }
  reply(n->id, false, 0);
}

static bool on_wait(const struct seccomp_notif *n, bool time32) {
  int mem = open_memory(n->pid);
  if (mem < 0) return false;
  struct held_wait *held = NULL;
  for (int i = 0; !held && i < MAX_WAITS; i++)
    if (!waits[i].used) held = &waits[i];
  struct pollfd fds[MAX_WAIT_FDS];
  int count = 0, taken = 0;
  long long asked;
  bool ok = held && wait_request(n, time32, mem, &asked, fds, &count) && asked > state.threshold_ns;
  for (; ok && taken < count; taken++) {
    int copy = take_thread_descriptor(n->pid, fds[taken].fd);
    if (copy < 0) ok = false; /* a closed descriptor: the kernel answers at once */
    else held->fds[taken] = (struct pollfd){copy, fds[taken].events, 0};
  }
  if (ok && still_valid(n->id)) {
    bool nothing = count == 0 || (count == 1 && (n->data.nr == NR_EPOLL_WAIT || n->data.nr == NR_EPOLL_PWAIT || n->data.nr == NR_EPOLL_PWAIT2) && empty_epoll(held->fds[0].fd));
    if (!nothing) {
      held->used = true, held->n = *n, held->time32 = time32, held->mem = mem, held->count = count, held->asked = asked;
      held->deadline = now_ns(CLOCK_MONOTONIC) + state.threshold_ns;
      return true;
    }
    record_shortened(n->pid, wait_or_timer_name(n->data.nr), asked);
    time_out(n, time32, mem);
  } else ok = false;
  for (int i = 0; i < taken; i++) close(held->fds[i].fd);
  close(mem);
  return ok;
}

static void release_wait(struct held_wait *held) {
  for (int i = 0; i < held->count; i++) close(held->fds[i].fd);
  close(held->mem);
  held->used = false;
}

/* Milliseconds until the next held wait's or shortened alarm's end; -1 for none. */
static int next_deadline_ms(long long now) {
  long long next = -1;
  for (int i = 0; i < MAX_WAITS; i++)
    if (waits[i].used && (next < 0 || waits[i].deadline < next)) next = waits[i].deadline;
  for (int i = 0; i < MAX_ALARMS; i++)
    if (alarms[i].pidfd >= 0 && (next < 0 || alarms[i].deadline < next)) next = alarms[i].deadline;
  if (next < 0) return -1;
  long long ms = (next - now + 999999) / 1000000;
  return ms < 0 ? 0 : ms > INT_MAX ? INT_MAX : (int)ms;
}

/*
 * poll() on the listener that also watches the held waits' descriptors and ends what is due: a wait one
 * of whose descriptors is ready goes on, one at its end times out, shortened alarms fire.
 */
static int poll_with_waits(struct pollfd *listener) {
  static struct pollfd fds[1 + MAX_WAITS * MAX_WAIT_FDS];
  static int owner[1 + MAX_WAITS * MAX_WAIT_FDS];
  int count = 0;
  fds[count++] = *listener;
  for (int i = 0; i < MAX_WAITS; i++)
    for (int j = 0; waits[i].used && j < waits[i].count; j++) {
      owner[count] = i;
      fds[count++] = (struct pollfd){waits[i].fds[j].fd, waits[i].fds[j].events, 0};
    }
  int got = poll(fds, (nfds_t)count, next_deadline_ms(now_ns(CLOCK_MONOTONIC)));
  if (got < 0) return got;
  listener->revents = fds[0].revents;
  bool ready[MAX_WAITS] = {false};
  for (int k = 1; k < count; k++)
    if (fds[k].revents & (fds[k].events | POLLERR | POLLHUP | POLLNVAL)) ready[owner[k]] = true;
  long long now = now_ns(CLOCK_MONOTONIC);
  for (int i = 0; i < MAX_WAITS; i++) {
    struct held_wait *held = &waits[i];
    if (!held->used) continue;
    /* Invalid: the process was interrupted by a signal or died; a restarted call comes again. */
    if (!still_valid(held->n.id)) release_wait(held);
    else if (ready[i]) reply(held->n.id, true, 0), release_wait(held);
    else if (now >= held->deadline) {
      record_shortened(held->n.pid, wait_or_timer_name(held->n.data.nr), held->asked);
      time_out(&held->n, held->time32, held->mem);
      release_wait(held);
    }
  }
  fire_alarms(now);
  return got;
}

/* A timer or wait call, under its x86_64 number; true when answered or held here. */
static bool on_timer_or_wait(const struct seccomp_notif *n, bool time32) {
  switch (n->data.nr) {
    case NR_ALARM: on_alarm(n); return false;
    case NR_SETITIMER: on_setitimer(n, time32); return false;
    case NR_TIMER_SETTIME: on_timer_settime(n, time32); return false;
    case NR_TIMERFD_SETTIME: return on_timerfd_settime(n, time32);
    default: return on_wait(n, time32);
  }
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
static bool on_sleep(const struct seccomp_notif *n, bool time32) {
  const __u64 *args = n->data.args;
  bool clock = n->data.nr == NR_CLOCK_NANOSLEEP;
  unsigned char raw[16];
  if (!read_memory(n->pid, clock ? args[2] : args[0], raw, time_size(time32))) return false;
  long long ns = time_ns(raw, time32, false);
  if (clock && (args[1] & TIMER_ABSTIME)) {
    struct timespec now;
    if (clock_gettime((clockid_t)args[0], &now) != 0) return false;
    ns -= (long long)now.tv_sec * 1000000000LL + now.tv_nsec;
  }
  if (ns <= state.threshold_ns || !still_valid(n->id)) return false;
  record_shortened(n->pid, clock ? "clock_nanosleep" : "nanosleep", ns);
  reply(n->id, false, 0);
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

static void handle(const struct seccomp_notif *received) {
  /* An i386 call is handled under its x86_64 number. */
  bool time32;
  struct seccomp_notif native = *received;
  native.data.nr = native_number(received, &time32);
  const struct seccomp_notif *n = &native;
  switch (n->data.nr) {
    case NR_NANOSLEEP:
    case NR_CLOCK_NANOSLEEP:
      if (on_sleep(n, time32)) return;
      break;
    case NR_ALARM:
    case NR_SETITIMER:
    case NR_TIMER_SETTIME:
    case NR_TIMERFD_SETTIME:
    case NR_SELECT:
    case NR_PSELECT6:
    case NR_POLL:
    case NR_PPOLL:
    case NR_EPOLL_WAIT:
    case NR_EPOLL_PWAIT:
    case NR_EPOLL_PWAIT2:
      if (on_timer_or_wait(n, time32)) return;
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

/*
 * The order native/init.c reads: which calls besides sleeps to watch (supervised-calls.h). Timers and
 * waits go with executions and deletions: not under strace, whose own seccomp filter would lose them.
 */
static int receive_listener(bool exits, bool files) {
  unsigned char order = (exits ? SUPERVISE_EXITS : 0) | (files ? SUPERVISE_FILES | SUPERVISE_TIMERS : 0);
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

/* Set by SIGTERM (the service stops the supervisor after the sample): the totals are written, then it ends. */
static volatile sig_atomic_t ending;

static void on_term(int signal_number) {
  (void)signal_number;
  ending = 1;
}

int main(int argc, char **argv) {
  if (argc != 13) {
    fprintf(stderr, "usage: supervisor ROOT_ID MERGED UPPER LOWER OWN_DIR OUT_DIR SLEEP_THRESHOLD_MS MAX_FILE MAX_TOTAL MAX_FILES EXITS FILES\n");
    return 2;
  }
  signal(SIGPIPE, SIG_IGN);
  // Without SA_RESTART: a wait in poll() ends with EINTR.
  struct sigaction term = {.sa_handler = on_term};
  sigemptyset(&term.sa_mask);
  sigaction(SIGTERM, &term, NULL);
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
  init_alarms();
  printf("{\"event\":\"ready\"}\n");
  while (!ending) {
    struct pollfd wait = {state.listener, POLLIN, 0};
    if (poll_with_waits(&wait) < 0) {
      if (errno == EINTR) continue;
      fail("poll");
    }
    /* Every process of the sample is gone: the filter has no user left. */
    if (wait.revents & POLLHUP) break;
    struct seccomp_notif notif;
    memset(&notif, 0, sizeof notif);
    if (ioctl(state.listener, SECCOMP_IOCTL_NOTIF_RECV, &notif) != 0) {
      if (errno == EINTR || errno == ENOENT) continue;
      fail("receiving a notification");
    }
    handle(&notif);
  }
  report_unrecorded();
  return 0;
}
