/*
 * nestbox's monitor, loader side: loads and attaches monitor.bpf.c once, then serves session after
 * session, told what to do on standard input:
 *
 *   arm <cgroup v2 id> <cgroup level> <file>   records every task of that cgroup (and of cgroups below
 *                                              it) into the file
 *   disarm                                     stops, writes everything of the session, closes the file
 *
 * It answers on standard output, one JSON object a line ({"ctl":"armed"}, {"ctl":"disarmed"}...). The
 * records go to a file, not a pipe, so that a reader that falls behind never keeps the loader from
 * emptying the kernel's ring buffer. They are in the shape of nestbox's TraceRecord
 * (src/machinery/host/tracer/trace-records.ts), with two fields left for the reader to decode: socket
 * addresses as the hex bytes of the sockaddr, mapping addresses as hex. A record may carry `repeated`
 * (the count of identical calls folded into it); `closes` records list the descriptors a process closed
 * since its previous record. They are written
 *  - with -f (the host's service), as frames (read by src/machinery/host/tracer/monitor-frames.ts): a
 *    16-byte header (format, the system call's name's length and number, thread, time), then for most
 *    records a JSON object without time and thread, and a newline; for the records a busy program
 *    makes by the thousand (opens, descriptor copies, closes, getdents) their numbers in binary, the
 *    name's and the path's bytes: no text to format or parse;
 *  - without it (the qemu guest's stream), as JSON lines.
 *
 * Usage: monitor [-b ring buffer bytes] [-f]
 */
#define _GNU_SOURCE
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <time.h>
#include <unistd.h>
#include <linux/types.h>
#include <asm/unistd_64.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "monitor.h"
#include "monitor.skel.h"
#include "syscall-names.h"

#ifndef __NR_fchmodat2
#define __NR_fchmodat2 452
#endif

/* How long the loader sleeps when the kernel does not wake it (records then wait at most this long). */
#define POLL_MS 50
/* How often drops are looked at while a session records. */
#define LOST_CHECK_NS 200000000ull
#define EINTR_RET (-4)

static struct monitor_bpf *skel;
/* Where records go: the session's file (named by `arm`), written without waiting for its reader. */
static FILE *out;
/* CLOCK_REALTIME minus CLOCK_MONOTONIC, in nanoseconds: records are stamped with the latter. */
static long long realtime_offset;
static bool armed;
/* Records in frames (-f, see above), else as JSON lines with their time and thread (the qemu guest's stream). */
static bool framed;
static unsigned long long drops_seen;
static unsigned long long session_lost;
static unsigned long long last_lost_check;
static int ncpus;

static unsigned long long monotonic_ns(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec * 1000000000ull + t.tv_nsec;
}

static void measure_clocks(void) {
  struct timespec real, mono;
  clock_gettime(CLOCK_MONOTONIC, &mono);
  clock_gettime(CLOCK_REALTIME, &real);
  realtime_offset = (real.tv_sec - mono.tv_sec) * 1000000000ll + (real.tv_nsec - mono.tv_nsec);
}

static const char *syscall_name(unsigned nr, bool compat) {
  if (nr >= NR_TABLE) return NULL;
  const char *name = compat ? names32[nr] : names64[nr];
  return name ? name : names_newer[nr];
}

/* ---- frames ---- */

enum frame_format {
  FRAME_JSON = 0,
  FRAME_OPEN = 1,
  FRAME_DUP = 2,
  FRAME_CLOSES = 3,
  FRAME_GETDENTS = 4,
};

/* Every frame starts so; the system call's name (api_length bytes) follows the format's numbers. */
struct frame_header {
  __u8 format;
  __u8 api_length;
  __u16 nr; /* the system call (64-bit) the name is of, NO_NR for none */
  __u32 tid;
  __u32 seconds; /* since the epoch */
  __u32 nanoseconds;
};

struct open_frame {
  struct frame_header h;
  __u32 repeated;
  __s32 dirfd;
  __u32 flags;
  __u32 mode;
  __s32 ret;
  __u32 path_length; /* the path's bytes follow the name */
};

struct dup_frame {
  struct frame_header h;
  __u32 repeated;
  __s32 oldfd;
  __s32 newfd;
};

struct closes_frame {
  struct frame_header h;
  __u32 count;
  __s32 fds[CLOSES_MAX]; /* only `count` of them are written */
};

struct getdents_frame {
  struct frame_header h;
  __u32 repeated;
  __s32 fd;
  __u32 count;
  __s32 ret;
};

_Static_assert(sizeof(struct frame_header) == 16 && sizeof(struct open_frame) == 40 && sizeof(struct dup_frame) == 28 &&
               sizeof(struct closes_frame) == 20 + 4 * CLOSES_MAX && sizeof(struct getdents_frame) == 32,
               "frames are read at fixed offsets");

static struct frame_header frame_header(enum frame_format format, unsigned long long ns, unsigned tid, unsigned nr, const char *api) {
  unsigned long long epoch = ns + realtime_offset;
  size_t length = api ? strlen(api) : 0;
  return (struct frame_header){.format = format, .api_length = length, .nr = api ? nr : NO_NR, .tid = tid,
                               .seconds = epoch / 1000000000ull, .nanoseconds = epoch % 1000000000ull};
}

/* A binary frame: its numbers, then the system call's name and `tail` (a path). */
static void out_frame(const void *frame, size_t size, const char *api, const char *tail, size_t tail_length) {
  fwrite_unlocked(frame, size, 1, out);
  if (api) fwrite_unlocked(api, strlen(api), 1, out);
  if (tail_length) fwrite_unlocked(tail, tail_length, 1, out);
}

/* Starts a JSON record: in a frame, its header and the opening brace; else the brace, time and thread. */
static void begin_json(unsigned long long ns, unsigned tid) {
  if (!framed) {
    unsigned long long epoch = ns + realtime_offset;
    fprintf(out, "{\"ts\":%llu.%09llu,\"tid\":%u,", epoch / 1000000000ull, epoch % 1000000000ull, tid);
    return;
  }
  struct frame_header h = frame_header(FRAME_JSON, ns, tid, NO_NR, NULL);
  fwrite_unlocked(&h, sizeof(h), 1, out);
  putc_unlocked('{', out);
}

static void out_string(const char *bytes, size_t len) {
  putc_unlocked('"', out);
  for (size_t i = 0; i < len; i++) {
    unsigned char c = bytes[i];
    if (c == '"' || c == '\\') {
      putc_unlocked('\\', out);
      putc_unlocked(c, out);
    } else if (c < 0x20 || c == 0x7f) {
      fprintf(out, "\\u%04x", c);
    } else {
      putc_unlocked(c, out);
    }
  }
  putc_unlocked('"', out);
}

static void out_hex(const unsigned char *bytes, size_t len) {
  static const char digits[] = "0123456789abcdef";
  putc_unlocked('"', out);
  for (size_t i = 0; i < len; i++) {
    putc_unlocked(digits[bytes[i] >> 4], out);
    putc_unlocked(digits[bytes[i] & 15], out);
  }
  putc_unlocked('"', out);
}

/* The system call's name a record is made by, when it is one. */
static const char *api_of(const struct rec_header *h) {
  return h->nr == NO_NR ? NULL : syscall_name(h->nr, false);
}

/* Starts a JSON record (time and thread: see begin_json), then its kind and, when known, the system call's name. */
static void begin(const struct rec_header *h, unsigned tid, const char *op) {
  begin_json(h->ts, tid);
  fprintf(out, "\"op\":\"%s\"", op);
  const char *api = api_of(h);
  if (api) fprintf(out, ",\"api\":\"%s\"", api);
  if (h->repeated) fprintf(out, ",\"repeated\":%u", h->repeated);
}

static void end_record(void) {
  fputs("}\n", out);
}

/* ---- data items of a syscall record ---- */

struct items {
  const unsigned char *at;
  const unsigned char *end;
};

struct item {
  const char *bytes;
  size_t len;
};

static struct item next_item(struct items *items) {
  struct item item = {"", 0};
  if (items->end - items->at < 2) return item;
  size_t len = items->at[0] | (items->at[1] << 8);
  items->at += 2;
  if ((size_t)(items->end - items->at) < len) len = items->end - items->at;
  item.bytes = (const char *)items->at;
  item.len = len;
  items->at += len;
  return item;
}

static void field_string(const char *name, struct item item) {
  fprintf(out, ",\"%s\":", name);
  out_string(item.bytes, item.len);
}

static void field_int(const char *name, long long value) {
  fprintf(out, ",\"%s\":%lld", name, value);
}

/* A sockaddr as hex, or null when the call had none. */
static void field_address(struct item item) {
  fputs(",\"address\":", out);
  if (item.len < 2) fputs("null", out);
  else out_hex((const unsigned char *)item.bytes, item.len);
}

/* A list of NUL-ended strings as a JSON array. */
static void field_argv(struct item item) {
  fputs(",\"argv\":[", out);
  size_t start = 0;
  bool first = true;
  for (size_t i = 0; i < item.len; i++) {
    if (item.bytes[i] != 0) continue;
    if (!first) putc_unlocked(',', out);
    out_string(item.bytes + start, i - start);
    first = false;
    start = i + 1;
  }
  // The last string, when the kernel's copy was cut before its NUL.
  if (start < item.len) {
    if (!first) putc_unlocked(',', out);
    out_string(item.bytes + start, item.len - start);
  }
  putc_unlocked(']', out);
}

#define FD(x) ((long long)(int)(x))
#define U32(x) ((long long)(unsigned)(x))

static const char *const SETID_NAMES[] = {"setuid", "setgid", "setreuid", "setregid", "setresuid", "setresgid", "setfsuid", "setfsgid"};

static int setid_arity(unsigned nr) {
  switch (nr) {
  case __NR_setreuid: case __NR_setregid: return 2;
  case __NR_setresuid: case __NR_setresgid: return 3;
  default: return 1;
  }
}

static const char *setid_name(unsigned nr) {
  switch (nr) {
  case __NR_setuid: return SETID_NAMES[0];
  case __NR_setgid: return SETID_NAMES[1];
  case __NR_setreuid: return SETID_NAMES[2];
  case __NR_setregid: return SETID_NAMES[3];
  case __NR_setresuid: return SETID_NAMES[4];
  case __NR_setresgid: return SETID_NAMES[5];
  case __NR_setfsuid: return SETID_NAMES[6];
  case __NR_setfsgid: return SETID_NAMES[7];
  }
  return NULL;
}

/* Seconds from the record's time until an absolute time on `clock`. */
static double until(int clock, unsigned long long ts, double when) {
  double now = clock == CLOCK_REALTIME || clock == CLOCK_TAI ? (ts + realtime_offset) / 1e9 : ts / 1e9;
  return when - now;
}

static void sleep_record(const struct syscall_rec *r, long long ret) {
  const __u64 *a = r->args;
  double seconds = (double)(long long)r->extra[0] + (double)(long long)r->extra[1] / 1e9;
  if (r->h.nr == __NR_alarm) seconds = (double)(unsigned)a[0];
  // The 6th argument (clock_nanosleep has 4) carries the time of the call's entry, when it was seen.
  else if (r->h.nr == __NR_clock_nanosleep && (a[1] & 1)) seconds = until((int)a[0], a[5] ? a[5] : r->h.ts, seconds);
  // timerfd: TFD_TIMER_ABSTIME; the timer's clock is not known here, a time past 2001 is wall-clock.
  else if (r->h.nr == __NR_timerfd_settime && (a[1] & 1)) seconds = until(seconds > 1e9 ? CLOCK_REALTIME : CLOCK_MONOTONIC, r->h.ts, seconds);
  begin(&r->h, r->h.tid, "sleep");
  fprintf(out, ",\"seconds\":%.9g", seconds);
  field_int("ret", ret);
  end_record();
}

static bool call_record(const struct syscall_rec *r, struct items *items);

/* A decoded call's record; returns false when this call makes none. */
static bool syscall_record(const struct syscall_rec *r, size_t size) {
  const __u64 *a = r->args;
  long long ret = r->ret;
  unsigned nr = r->h.nr;
  struct items items = {(const unsigned char *)(r + 1), (const unsigned char *)r + size};
  const struct rec_header *h = &r->h;
  unsigned tid = h->tid;
  struct item one, two;
  switch (nr) {
  case __NR_open: case __NR_creat: case __NR_openat: case __NR_openat2: {
    long long dirfd = nr == __NR_openat || nr == __NR_openat2 ? FD(a[0]) : -100;
    long long flags = nr == __NR_creat ? 0101 | 01000 : nr == __NR_open ? U32(a[1]) : U32(a[2]);
    long long mode = nr == __NR_creat ? U32(a[1]) : nr == __NR_open ? U32(a[2]) : U32(a[3]);
    one = next_item(&items);
    if (nr == __NR_openat2) {
      two = next_item(&items);
      __u64 how[2] = {0, 0};
      memcpy(how, two.bytes, two.len < sizeof(how) ? two.len : sizeof(how));
      flags = (long long)how[0];
      mode = (long long)how[1];
    }
    if (framed && nr != __NR_openat2) {
      const char *api = api_of(h);
      struct open_frame f = {.h = frame_header(FRAME_OPEN, h->ts, tid, nr, api), .repeated = h->repeated, .dirfd = dirfd,
                             .flags = flags, .mode = mode, .ret = ret, .path_length = one.len};
      out_frame(&f, sizeof(f), api, one.bytes, one.len);
      return true;
    }
    begin(h, tid, "open");
    field_int("dirfd", dirfd);
    field_string("path", one);
    field_int("flags", flags);
    field_int("mode", mode);
    field_int("ret", ret);
    break;
  }
  case __NR_close:
    begin(h, tid, "close");
    field_int("fd", FD(a[0]));
    break;
  case __NR_dup: case __NR_dup2: case __NR_dup3: case __NR_fcntl: {
    if (ret < 0) return false;
    if (framed) {
      const char *api = api_of(h);
      struct dup_frame f = {.h = frame_header(FRAME_DUP, h->ts, tid, nr, api), .repeated = h->repeated, .oldfd = FD(a[0]), .newfd = ret};
      out_frame(&f, sizeof(f), api, NULL, 0);
      return true;
    }
    begin(h, tid, "dup");
    field_int("oldfd", FD(a[0]));
    field_int("newfd", ret);
    break;
  }
  case __NR_pipe: case __NR_pipe2: case __NR_socketpair:
    if (ret != 0) return false;
    begin(h, tid, "pipe");
    fprintf(out, ",\"fds\":[%lld,%lld],\"socket\":%s", FD(r->extra[0]), FD(r->extra[1]), nr == __NR_socketpair ? "true" : "false");
    break;
  case __NR_chdir: case __NR_fchdir:
    one = nr == __NR_chdir ? next_item(&items) : (struct item){"", 0};
    begin(h, tid, "chdir");
    field_int("dirfd", nr == __NR_chdir ? -100 : FD(a[0]));
    field_string("path", one);
    field_int("ret", ret);
    break;
  case __NR_rename: case __NR_renameat: case __NR_renameat2:
    one = next_item(&items);
    two = next_item(&items);
    begin(h, tid, "rename");
    field_int("fromDirfd", nr == __NR_rename ? -100 : FD(a[0]));
    field_string("from", one);
    field_int("toDirfd", nr == __NR_rename ? -100 : FD(a[2]));
    field_string("to", two);
    field_int("ret", ret);
    break;
  case __NR_unlink: case __NR_rmdir: case __NR_unlinkat:
    one = next_item(&items);
    begin(h, tid, "unlink");
    field_int("dirfd", nr == __NR_unlinkat ? FD(a[0]) : -100);
    field_string("path", one);
    fprintf(out, ",\"directory\":%s", nr == __NR_rmdir || (nr == __NR_unlinkat && (a[2] & 0x200)) ? "true" : "false");
    field_int("ret", ret);
    break;
  case __NR_mkdir: case __NR_mkdirat:
    one = next_item(&items);
    begin(h, tid, "mkdir");
    field_int("dirfd", nr == __NR_mkdirat ? FD(a[0]) : -100);
    field_string("path", one);
    field_int("mode", U32(nr == __NR_mkdirat ? a[2] : a[1]));
    field_int("ret", ret);
    break;
  case __NR_chmod: case __NR_fchmod: case __NR_fchmodat: case __NR_fchmodat2:
    one = nr == __NR_fchmod ? (struct item){"", 0} : next_item(&items);
    begin(h, tid, "chmod");
    field_int("dirfd", nr == __NR_chmod ? -100 : FD(a[0]));
    field_string("path", one);
    field_int("mode", U32(nr == __NR_fchmodat || nr == __NR_fchmodat2 ? a[2] : a[1]));
    field_int("ret", ret);
    break;
  case __NR_chown: case __NR_lchown: case __NR_fchown: case __NR_fchownat: {
    bool at = nr == __NR_fchownat;
    one = nr == __NR_fchown ? (struct item){"", 0} : next_item(&items);
    begin(h, tid, "chown");
    field_int("dirfd", nr == __NR_fchown || at ? FD(a[0]) : -100);
    field_string("path", one);
    field_int("uid", FD(at ? a[2] : a[1]));
    field_int("gid", FD(at ? a[3] : a[2]));
    field_int("ret", ret);
    break;
  }
  case __NR_link: case __NR_linkat: case __NR_symlink: case __NR_symlinkat:
    one = next_item(&items);
    two = next_item(&items);
    begin(h, tid, "link");
    field_string("target", one);
    field_int("targetDirfd", nr == __NR_linkat ? FD(a[0]) : -100);
    field_int("dirfd", nr == __NR_linkat ? FD(a[2]) : nr == __NR_symlinkat ? FD(a[1]) : -100);
    field_string("path", two);
    fprintf(out, ",\"symbolic\":%s", nr == __NR_symlink || nr == __NR_symlinkat ? "true" : "false");
    field_int("ret", ret);
    break;
  case __NR_socket:
    begin(h, tid, "socket");
    field_int("family", FD(a[0]));
    field_int("type", FD(a[1]));
    field_int("protocol", FD(a[2]));
    field_int("ret", ret);
    break;
  case __NR_connect: case __NR_bind:
    one = next_item(&items);
    begin(h, tid, nr == __NR_connect ? "connect" : "bind");
    field_int("fd", FD(a[0]));
    field_address(one);
    field_int("ret", ret);
    break;
  case __NR_listen: case __NR_accept: case __NR_accept4:
    begin(h, tid, nr == __NR_listen ? "listen" : "accept");
    field_int("fd", FD(a[0]));
    field_int("ret", ret);
    break;
  case __NR_sendto: case __NR_sendmsg: case __NR_write: case __NR_writev:
  case __NR_recvfrom: case __NR_recvmsg: case __NR_read: case __NR_readv: {
    bool sending = nr == __NR_sendto || nr == __NR_sendmsg || nr == __NR_write || nr == __NR_writev;
    one = next_item(&items);
    two = next_item(&items);
    begin(h, tid, sending ? "send" : "recv");
    field_int("fd", FD(a[0]));
    field_address(one);
    field_int("ret", ret);
    if (ret > 0) {
      fputs(",\"payload\":", out);
      out_hex((const unsigned char *)two.bytes, two.len);
    }
    break;
  }
  case __NR_memfd_create:
    one = next_item(&items);
    begin(h, tid, "memfd");
    field_string("name", one);
    field_int("ret", ret);
    break;
  case __NR_mmap:
    if (ret < 0 && ret > -4096) return false;
    begin(h, tid, "exec_map");
    fprintf(out, ",\"call\":\"mmap\",\"address\":\"%llx\"", (unsigned long long)ret);
    field_int("length", (long long)a[1]);
    field_int("prot", U32(a[2]));
    field_int("fd", (a[3] & 0x20) ? -1 : FD(a[4]));
    break;
  case __NR_mprotect:
    if (ret != 0) return false;
    begin(h, tid, "exec_map");
    fprintf(out, ",\"call\":\"mprotect\",\"address\":\"%llx\"", (unsigned long long)a[0]);
    field_int("length", (long long)a[1]);
    field_int("prot", U32(a[2]));
    field_int("fd", -1);
    break;
  case __NR_ptrace:
    begin(h, tid, "ptrace");
    field_int("request", (long long)a[0]);
    field_int("target", FD(a[1]));
    field_int("ret", ret);
    break;
  case __NR_init_module: case __NR_finit_module: case __NR_delete_module:
    one = nr == __NR_delete_module ? next_item(&items) : (struct item){"", 0};
    begin(h, tid, "module");
    fprintf(out, ",\"call\":\"%s\"", syscall_name(nr, false));
    field_int("fd", nr == __NR_finit_module ? FD(a[0]) : -1);
    field_string("name", one);
    field_int("ret", ret);
    break;
  case __NR_setuid: case __NR_setgid: case __NR_setreuid: case __NR_setregid:
  case __NR_setresuid: case __NR_setresgid: case __NR_setfsuid: case __NR_setfsgid:
    begin(h, tid, "setid");
    fprintf(out, ",\"call\":\"%s\",\"ids\":[", setid_name(nr));
    for (int i = 0; i < setid_arity(nr); i++) fprintf(out, "%s%lld", i ? "," : "", FD(a[i]));
    putc_unlocked(']', out);
    field_int("ret", ret);
    break;
  case __NR_kill: case __NR_tkill: case __NR_tgkill:
    begin(h, tid, "kill");
    field_int("target", FD(a[0]));
    field_int("signal", FD(nr == __NR_tgkill ? a[2] : a[1]));
    field_int("ret", ret);
    break;
  case __NR_nanosleep: case __NR_clock_nanosleep: case __NR_alarm: case __NR_timerfd_settime:
    sleep_record(r, ret);
    return true;
  case __NR_execve: case __NR_execveat:
    one = next_item(&items);
    two = next_item(&items);
    begin(h, tid, "exec");
    field_int("dirfd", nr == __NR_execveat ? FD(a[0]) : -100);
    field_string("path", one);
    field_argv(two);
    field_int("ret", ret);
    break;
  default:
    return call_record(r, &items);
  }
  end_record();
  return true;
}

/* Other decoded calls, as `call` records: arguments named after the kernel's prototypes. */
static bool call_record(const struct syscall_rec *r, struct items *items) {
  const __u64 *a = r->args;
  unsigned nr = r->h.nr;
  if (framed && (nr == __NR_getdents || nr == __NR_getdents64)) {
    const char *api = api_of(&r->h);
    struct getdents_frame f = {.h = frame_header(FRAME_GETDENTS, r->h.ts, r->h.tid, nr, api), .repeated = r->h.repeated,
                               .fd = FD(a[0]), .count = U32(a[2]), .ret = r->ret};
    out_frame(&f, sizeof(f), api, NULL, 0);
    return true;
  }
  begin(&r->h, r->h.tid, "call");
  fputs(",\"args\":{", out);
  switch (nr) {
  case __NR_setsid:
    break;
  case __NR_setpgid:
    fprintf(out, "\"pid\":%lld,\"pgid\":%lld", FD(a[0]), FD(a[1]));
    break;
  case __NR_prctl:
    fprintf(out, "\"option\":%lld", FD(a[0]));
    if (a[0] == 15) {
      struct item name = next_item(items);
      fputs(",\"name\":", out);
      out_string(name.bytes, name.len);
    } else {
      fprintf(out, ",\"arg2\":%llu,\"arg3\":%llu,\"arg4\":%llu,\"arg5\":%llu", a[1], a[2], a[3], a[4]);
    }
    break;
  case __NR_capset: {
    struct item header = next_item(items);
    struct item data = next_item(items);
    __u32 h[2] = {0, 0}, d[3] = {0, 0, 0};
    memcpy(h, header.bytes, header.len < sizeof(h) ? header.len : sizeof(h));
    memcpy(d, data.bytes, data.len < sizeof(d) ? data.len : sizeof(d));
    fprintf(out, "\"version\":%u,\"pid\":%d,\"effective\":%u,\"permitted\":%u,\"inheritable\":%u", h[0], (int)h[1], d[0], d[1], d[2]);
    break;
  }
  case __NR_mount: {
    struct item source = next_item(items), target = next_item(items), type = next_item(items);
    fputs("\"source\":", out);
    out_string(source.bytes, source.len);
    fputs(",\"target\":", out);
    out_string(target.bytes, target.len);
    fputs(",\"filesystemtype\":", out);
    out_string(type.bytes, type.len);
    fprintf(out, ",\"mountflags\":%llu", a[3]);
    break;
  }
  case __NR_umount2: {
    struct item target = next_item(items);
    fputs("\"target\":", out);
    out_string(target.bytes, target.len);
    fprintf(out, ",\"flags\":%lld", FD(a[1]));
    break;
  }
  case __NR_truncate: {
    struct item path = next_item(items);
    fputs("\"path\":", out);
    out_string(path.bytes, path.len);
    fprintf(out, ",\"length\":%lld", (long long)a[1]);
    break;
  }
  case __NR_ftruncate:
    fprintf(out, "\"fd\":%lld,\"length\":%lld", FD(a[0]), (long long)a[1]);
    break;
  case __NR_getdents: case __NR_getdents64:
    fprintf(out, "\"fd\":%lld,\"count\":%lld", FD(a[0]), U32(a[2]));
    break;
  default:
    fprintf(out, "\"arg0\":%llu", a[0]);
    break;
  }
  putc_unlocked('}', out);
  field_int("ret", r->ret);
  end_record();
  return true;
}

static void identity_record(const struct identity_rec *r) {
  begin(&r->h, r->h.tid, "identity");
  field_int("pid", r->pid);
  field_int("ppid", r->ppid);
  field_string("comm", (struct item){r->comm, strnlen(r->comm, sizeof(r->comm))});
  if (r->nstid != r->h.tid) field_int("nstid", r->nstid);
  end_record();
}

static void write_total_record(const struct rec_header *h, unsigned tid, unsigned pid, long long fd, unsigned long long bytes) {
  begin(h, tid, "write");
  field_int("pid", pid);
  field_int("fd", fd);
  fprintf(out, ",\"bytes\":%llu,\"final\":true", bytes);
  end_record();
}

/* A wait status as the exit code, or minus the signal that ended the process. */
static int exit_code_of(int status) {
  int signal = status & 0x7f;
  return signal ? -signal : (status >> 8) & 0xff;
}

/* Counts by name: a call known under the same name in both tables is one entry. */
static void counts_record(const struct rec_header *h, unsigned pid, const __u32 *counts) {
  static const char *names[COUNT_SLOTS];
  static unsigned long long totals[COUNT_SLOTS];
  static char unnamed[COUNT_SLOTS][16];
  int used = 0;
  for (int slot = 0; slot < COUNT_SLOTS; slot++) {
    if (!counts[slot]) continue;
    bool compat = slot >= NR_TABLE;
    const char *name = syscall_name(slot % NR_TABLE, compat);
    if (!name) {
      snprintf(unnamed[slot], sizeof(unnamed[slot]), compat ? "%d/32" : "%d", slot % NR_TABLE);
      name = unnamed[slot];
    }
    int i = 0;
    while (i < used && strcmp(names[i], name) != 0) i++;
    if (i == used) {
      names[used] = name;
      totals[used++] = 0;
    }
    totals[i] += counts[slot];
  }
  struct rec_header plain = *h;
  plain.nr = NO_NR;
  begin(&plain, pid, "counts");
  field_int("pid", pid);
  fputs(",\"counts\":{", out);
  for (int i = 0; i < used; i++) {
    if (i) putc_unlocked(',', out);
    out_string(names[i], strlen(names[i]));
    fprintf(out, ":%llu", totals[i]);
  }
  putc_unlocked('}', out);
  end_record();
}

static int on_record(void *context, void *data, size_t size) {
  (void)context;
  const struct rec_header *h = data;
  if (size < sizeof(*h) || !out) return 0;
  switch (h->kind) {
  case REC_SYSCALL:
    if (size >= sizeof(struct syscall_rec)) syscall_record(data, size);
    break;
  case REC_IDENTITY:
    identity_record(data);
    break;
  case REC_WRITE_TOTAL: {
    const struct write_total_rec *r = data;
    write_total_record(h, h->tid, h->tgid, r->fd, r->bytes);
    break;
  }
  case REC_FORK:
    begin(h, h->tid, "fork");
    field_int("child", ((const struct fork_rec *)data)->child);
    end_record();
    break;
  case REC_EXEC: {
    struct items items = {(const unsigned char *)data + sizeof(struct exec_rec), (const unsigned char *)data + size};
    struct item path = next_item(&items);
    struct item argv = next_item(&items);
    begin(h, h->tid, "exec");
    field_int("dirfd", -100);
    field_string("path", path);
    field_argv(argv);
    field_int("ret", 0);
    end_record();
    break;
  }
  case REC_EXIT:
    begin(h, h->tid, "exit");
    field_int("code", exit_code_of(((const struct exit_rec *)data)->status));
    end_record();
    break;
  case REC_COUNTS:
    if (size >= sizeof(struct counts_rec)) counts_record(h, h->tgid, ((const struct counts_rec *)data)->counts);
    break;
  case REC_CLOSES: {
    const struct closes_rec *r = data;
    if (!framed) {
      begin(h, h->tid, "closes");
      fputs(",\"fds\":[", out);
      for (unsigned i = 0; i < r->count && i < CLOSES_MAX; i++) fprintf(out, "%s%d", i ? "," : "", r->fds[i]);
      fputs("]}\n", out);
      break;
    }
    struct closes_frame f = {.h = frame_header(FRAME_CLOSES, h->ts, h->tid, NO_NR, NULL), .count = r->count < CLOSES_MAX ? r->count : CLOSES_MAX};
    memcpy(f.fds, r->fds, f.count * sizeof(f.fds[0]));
    out_frame(&f, sizeof(f) - (CLOSES_MAX - f.count) * sizeof(f.fds[0]), NULL, NULL, 0);
    break;
  }
  case REC_RENAME: {
    const struct rename_rec *r = data;
    begin(h, r->target, "rename_task");
    field_string("name", (struct item){r->comm, strnlen(r->comm, sizeof(r->comm))});
    end_record();
    break;
  }
  }
  return 0;
}

/* ---- sessions ---- */

static unsigned long long total_drops(void) {
  __u64 values[ncpus];
  __u32 zero = 0;
  if (bpf_map_lookup_elem(bpf_map__fd(skel->maps.drops), &zero, values)) return drops_seen;
  unsigned long long sum = 0;
  for (int i = 0; i < ncpus; i++) sum += values[i];
  return sum;
}

/* Sends a `lost` record for what the kernel dropped since the last look. */
static void report_lost(void) {
  unsigned long long drops = total_drops();
  last_lost_check = monotonic_ns();
  if (drops <= drops_seen) return;
  unsigned long long count = drops - drops_seen;
  drops_seen = drops;
  session_lost += count;
  begin_json(monotonic_ns(), 0);
  fprintf(out, "\"op\":\"lost\",\"count\":%llu}\n", count);
}

/* Waits until no BPF program of ours runs any more (see `barrier` in monitor.bpf.c). */
static int wait_for_programs(void) {
  __u32 zero = 0;
  int inner = bpf_map__fd(skel->maps.barrier_inner);
  return bpf_map_update_elem(bpf_map__fd(skel->maps.barrier), &zero, &inner, BPF_ANY);
}

/* Every key of a hash map, collected before any is deleted (deleting while walking restarts the walk). */
static size_t map_keys(int fd, void *keys, size_t key_size, size_t max) {
  size_t count = 0;
  char *at = keys;
  const void *previous = NULL;
  while (count < max && bpf_map_get_next_key(fd, previous, at) == 0) {
    previous = at;
    at += key_size;
    count++;
  }
  return count;
}

/* Sleeps that were still going on: reported as interrupted, since the analysis ends them. */
static void flush_pending(__u32 generation) {
  int fd = bpf_map__fd(skel->maps.pending);
  static __u32 keys[65536];
  size_t count = map_keys(fd, keys, sizeof(keys[0]), 65536);
  struct syscall_rec r;
  for (size_t i = 0; i < count; i++) {
    struct {
      __u32 nr, gen;
      __u64 ts, args[6], extra[2];
    } p;
    if (bpf_map_lookup_elem(fd, &keys[i], &p) == 0 && p.gen == generation) {
      bool sleeping = p.nr == __NR_nanosleep || p.nr == __NR_clock_nanosleep || p.nr == __NR_alarm;
      if (sleeping) {
        memset(&r, 0, sizeof(r));
        r.h = (struct rec_header){.ts = p.ts, .tid = keys[i], .kind = REC_SYSCALL, .nr = p.nr, .size = sizeof(r)};
        memcpy(r.args, p.args, sizeof(r.args));
        memcpy(r.extra, p.extra, sizeof(r.extra));
        sleep_record(&r, EINTR_RET);
      }
    }
    bpf_map_delete_elem(fd, &keys[i]);
  }
}

/*
 * What processes still running held back (a call and its repeats; a descriptor copy or closes are no
 * news at the end), their counts, and write totals no close or exit sent.
 */
static void flush_totals(void) {
  unsigned long long now = monotonic_ns();
  int fd = bpf_map__fd(skel->maps.procs);
  static __u32 pids[16384];
  static struct proc proc;
  size_t count = map_keys(fd, pids, sizeof(pids[0]), 16384);
  struct rec_header h = {.ts = now, .nr = NO_NR};
  for (size_t i = 0; i < count; i++) {
    if (bpf_map_lookup_elem(fd, &pids[i], &proc) == 0) {
      if (proc.call_size >= sizeof(struct rec_header) && proc.call_size <= HELD_MAX) {
        ((struct rec_header *)proc.call)->repeated = proc.repeated;
        on_record(NULL, proc.call, proc.call_size);
      }
      counts_record(&h, pids[i], proc.counts);
    }
    bpf_map_delete_elem(fd, &pids[i]);
  }
  fd = bpf_map__fd(skel->maps.writes);
  static struct fd_key fds[8192];
  count = map_keys(fd, fds, sizeof(fds[0]), 8192);
  for (size_t i = 0; i < count; i++) {
    __u64 bytes;
    if (bpf_map_lookup_elem(fd, &fds[i], &bytes) == 0 && bytes > 0) write_total_record(&h, fds[i].tgid, fds[i].tgid, fds[i].fd, bytes);
    bpf_map_delete_elem(fd, &fds[i]);
  }
  // Threads seen are forgotten.
  static __u32 ids[65536];
  int seen = bpf_map__fd(skel->maps.seen);
  count = map_keys(seen, ids, sizeof(ids[0]), 65536);
  for (size_t i = 0; i < count; i++) bpf_map_delete_elem(seen, &ids[i]);
}

static void arm(unsigned long long cgroup, unsigned level, const char *path, struct ring_buffer *rb) {
  if (armed) {
    fprintf(stdout, "{\"ctl\":\"error\",\"message\":\"already armed\"}\n");
    return;
  }
  // Whatever an earlier session left unread (nothing, after a disarm) is no one's: out is not open yet.
  ring_buffer__consume(rb);
  static char buffer[1 << 20];
  out = fopen(path, "we");
  if (!out) {
    fprintf(stdout, "{\"ctl\":\"error\",\"message\":\"cannot open the records file: %s\"}\n", strerror(errno));
    out = NULL;
    return;
  }
  setvbuf(out, buffer, _IOFBF, sizeof(buffer));
  // The wall clock may have been set since the last session (a restored guest's analyzer sets it).
  measure_clocks();
  drops_seen = total_drops();
  session_lost = 0;
  skel->bss->gen++;
  skel->bss->armed_level = level;
  __atomic_store_n(&skel->bss->armed_cgroup, cgroup, __ATOMIC_SEQ_CST);
  armed = true;
  last_lost_check = monotonic_ns();
  fprintf(stdout, "{\"ctl\":\"armed\",\"cgroup\":\"%llu\"}\n", cgroup);
}

static void disarm(struct ring_buffer *rb) {
  if (!armed) {
    fprintf(stdout, "{\"ctl\":\"disarmed\",\"lost\":0,\"confirmed\":true}\n");
    return;
  }
  __atomic_store_n(&skel->bss->armed_cgroup, 0, __ATOMIC_SEQ_CST);
  armed = false;
  int barrier = wait_for_programs();
  ring_buffer__consume(rb);
  flush_pending(skel->bss->gen);
  flush_totals();
  report_lost();
  bool written = fclose(out) == 0;
  out = NULL;
  fprintf(stdout, "{\"ctl\":\"disarmed\",\"lost\":%llu,\"confirmed\":%s}\n", session_lost, barrier == 0 && written ? "true" : "false");
}

/* Reads and runs the commands that arrived on standard input; false at its end. */
static bool commands(struct ring_buffer *rb) {
  static char buffer[4096];
  static size_t used;
  ssize_t n = read(0, buffer + used, sizeof(buffer) - 1 - used);
  if (n <= 0) return n < 0 && errno == EINTR;
  used += n;
  buffer[used] = 0;
  char *line = buffer, *newline;
  while ((newline = strchr(line, '\n'))) {
    *newline = 0;
    unsigned long long cgroup;
    unsigned level;
    int path = 0;
    if (sscanf(line, "arm %llu %u %n", &cgroup, &level, &path) == 2 && path > 0) arm(cgroup, level, line + path, rb);
    else if (strcmp(line, "disarm") == 0) disarm(rb);
    else fprintf(stdout, "{\"ctl\":\"error\",\"message\":\"unknown command\"}\n");
    line = newline + 1;
  }
  used = buffer + used - line;
  memmove(buffer, line, used);
  fflush(stdout);
  return true;
}

/*
 * Why the kernel refused a program, as " (prog 'name': the verifier's reason)": the loader's last line
 * carries it, since whoever starts the monitor shows only the last lines of what it wrote.
 */
static char refusal[512];

static bool is_statistics(const char *line, size_t length) {
  static const char *const starts[] = {"processed ", "verification time ", "stack depth ", "-- END PROG LOAD LOG"};
  for (size_t i = 0; i < sizeof(starts) / sizeof(starts[0]); i++) {
    size_t n = strlen(starts[i]);
    if (length >= n && strncmp(line, starts[i], n) == 0) return true;
  }
  return length == 0;
}

/* A line of the log about one instruction ("382: (0f) r7 += r1"). */
static bool is_instruction(const char *line, size_t length) {
  size_t digits = strspn(line, "0123456789");
  return digits > 0 && digits < length && line[digits] == ':';
}

/*
 * From libbpf's message holding a program's verifier log ("prog 'x': -- BEGIN PROG LOAD LOG --\n...
 * -- END PROG LOAD LOG --"): the log's last line before its statistics, which says what was refused,
 * after the instruction it is about when the line before is one.
 */
static void note_refusal(const char *message) {
  const char *name = strstr(message, "prog '"), *log = strstr(message, "-- BEGIN PROG LOAD LOG --\n");
  if (!name || !log || refusal[0]) return;
  name += strlen("prog '");
  int name_length = (int)strcspn(name, "'");
  const char *last = NULL, *before = NULL;
  size_t last_length = 0, before_length = 0;
  for (const char *line = strchr(log, '\n') + 1; *line;) {
    size_t length = strcspn(line, "\n");
    if (!is_statistics(line, length)) {
      before = last, before_length = last_length;
      last = line, last_length = length;
    }
    line += length + (line[length] == '\n');
  }
  if (!last) return;
  if (before && is_instruction(before, before_length) && !is_instruction(last, last_length))
    snprintf(refusal, sizeof(refusal), " (prog '%.*s': %.*s: %.*s)", name_length, name, (int)before_length, before,
             (int)last_length, last);
  else
    snprintf(refusal, sizeof(refusal), " (prog '%.*s': %.*s)", name_length, name, (int)last_length, last);
}

static int print_libbpf(enum libbpf_print_level level, const char *format, va_list args) {
  if (level == LIBBPF_DEBUG) return 0;
  char *message = NULL;
  if (vasprintf(&message, format, args) < 0) return -1;
  note_refusal(message);
  int written = fputs(message, stderr);
  free(message);
  return written;
}

int main(int argc, char **argv) {
  unsigned long ring_bytes = 32ul << 20;
  for (int opt; (opt = getopt(argc, argv, "b:f")) != -1;) {
    if (opt == 'b') ring_bytes = strtoul(optarg, NULL, 0);
    else if (opt == 'f') framed = true;
    else return 2;
  }
  // If the service dies, so does its monitor, instead of staying attached.
  prctl(PR_SET_PDEATHSIG, SIGKILL);
  signal(SIGPIPE, SIG_IGN);
  libbpf_set_print(print_libbpf);
  ncpus = libbpf_num_possible_cpus();
  static char output[1 << 20];
  setvbuf(stdout, output, _IOFBF, sizeof(output));

  skel = monitor_bpf__open();
  if (!skel) {
    fprintf(stderr, "monitor: cannot open the BPF object\n");
    return 1;
  }
  bpf_map__set_max_entries(skel->maps.events, ring_bytes);
  skel->rodata->wake_bytes = ring_bytes / 4 < (1ul << 20) ? ring_bytes / 4 : (1ul << 20);
  int error = monitor_bpf__load(skel);
  if (!error) error = monitor_bpf__attach(skel);
  if (error) {
    fprintf(stderr, "monitor: cannot load or attach the BPF programs: %s%s\n", strerror(-error), refusal);
    return 1;
  }
  struct ring_buffer *rb = ring_buffer__new(bpf_map__fd(skel->maps.events), on_record, NULL, NULL);
  if (!rb) {
    fprintf(stderr, "monitor: cannot read the ring buffer\n");
    return 1;
  }
  measure_clocks();
  fprintf(stdout, "{\"ctl\":\"ready\"}\n");
  fflush(stdout);

  struct pollfd fds[2] = {{.fd = 0, .events = POLLIN}, {.fd = ring_buffer__epoll_fd(rb), .events = POLLIN}};
  for (;;) {
    int ready = poll(fds, 2, POLL_MS);
    if (ready < 0 && errno != EINTR) break;
    // Woken or not, read what is there: the kernel wakes us only when much is waiting.
    ring_buffer__consume(rb);
    if (armed && monotonic_ns() - last_lost_check > LOST_CHECK_NS) report_lost();
    if (out) fflush(out);
    if ((fds[0].revents & (POLLIN | POLLHUP)) && !commands(rb)) break;
    fflush(stdout);
  }
  ring_buffer__free(rb);
  monitor_bpf__destroy(skel);
  return 0;
}
