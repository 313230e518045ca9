// SPDX-License-Identifier: GPL-2.0
/*
 * nestbox's monitor, kernel side: follows every task of one cgroup (v2) through tracepoints only
 * (raw_syscalls, sched, task_rename: the hosts nestbox runs on may have no kprobes or fentry).
 *
 * - Every system call is counted per process, in the kernel (`procs`), and sent when the process
 *   executes a new program (the counts then start again, with that exec) and when it exits.
 * - The calls that matter are decoded at their exit, from the registers they entered with, into a
 *   record with the strings and buffers they point to (read then, when the kernel has just paged them
 *   in), sent through one ring buffer. A loop of identical calls is one record with its count of
 *   repeats, and closes travel together (see "Held back" below).
 * - Writes are summed per (process, descriptor) and sent once, when the descriptor is closed or
 *   replaced, or the process exits.
 * - The ring buffer wakes the loader only when much is waiting: the loader also polls it, so a record
 *   costs the traced program no wake-up. A record that does not fit is counted in `drops`.
 *
 * The loader arms it by writing the cgroup's id and level into `armed_cgroup`/`armed_level`; `gen`
 * numbers the sessions, so that what a thread left in the maps in an earlier one is ignored.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_core_read.h>
#include <asm/unistd_64.h>
#include "monitor.h"
#include "compat-calls.h"

#ifndef __NR_fchmodat2
#define __NR_fchmodat2 452
#endif

#define TS_COMPAT 0x0002
#define CLONE_THREAD 0x00010000
#define PROT_EXEC 0x4
#define F_DUPFD 0
#define F_DUPFD_CLOEXEC 1030
#define PR_SET_NAME 15
#define S_IFMT 0170000
#define S_IFSOCK 0140000

char LICENSE[] SEC("license") = "GPL";

__u64 armed_cgroup = 0;
__u32 armed_level = 0;
__u32 gen = 0;
/* Wake the loader when this much is waiting in the ring buffer (set before loading). */
const volatile __u64 wake_bytes = 1 << 20;

/* What a call does at entry: 1 its arguments are kept for the exit, 2 it is recorded at entry. */
#define AT_EXIT 1
#define AT_ENTRY 2

static const __u8 decoded[NR_TABLE] = {
  [__NR_read] = AT_EXIT, [__NR_write] = AT_EXIT, [__NR_readv] = AT_EXIT, [__NR_writev] = AT_EXIT,
  [__NR_pwrite64] = AT_EXIT, [__NR_pwritev] = AT_EXIT, [__NR_pwritev2] = AT_EXIT,
  [__NR_open] = AT_EXIT, [__NR_openat] = AT_EXIT, [__NR_openat2] = AT_EXIT, [__NR_creat] = AT_EXIT,
  [__NR_close] = AT_ENTRY,
  [__NR_mmap] = AT_EXIT, [__NR_mprotect] = AT_EXIT, [__NR_memfd_create] = AT_EXIT,
  [__NR_pipe] = AT_EXIT, [__NR_pipe2] = AT_EXIT, [__NR_socketpair] = AT_EXIT,
  [__NR_dup] = AT_EXIT, [__NR_dup2] = AT_EXIT, [__NR_dup3] = AT_EXIT, [__NR_fcntl] = AT_EXIT,
  [__NR_nanosleep] = AT_EXIT, [__NR_clock_nanosleep] = AT_EXIT, [__NR_alarm] = AT_EXIT,
  [__NR_timerfd_settime] = AT_EXIT,
  [__NR_clone] = AT_EXIT, [__NR_clone3] = AT_EXIT, [__NR_fork] = AT_EXIT, [__NR_vfork] = AT_EXIT,
  [__NR_execve] = AT_EXIT, [__NR_execveat] = AT_EXIT, [__NR_exit] = AT_EXIT, [__NR_exit_group] = AT_EXIT,
  [__NR_kill] = AT_EXIT, [__NR_tkill] = AT_EXIT, [__NR_tgkill] = AT_EXIT,
  [__NR_setsid] = AT_EXIT, [__NR_setpgid] = AT_EXIT, [__NR_prctl] = AT_EXIT, [__NR_capset] = AT_EXIT,
  [__NR_setuid] = AT_EXIT, [__NR_setgid] = AT_EXIT, [__NR_setreuid] = AT_EXIT, [__NR_setregid] = AT_EXIT,
  [__NR_setresuid] = AT_EXIT, [__NR_setresgid] = AT_EXIT, [__NR_setfsuid] = AT_EXIT, [__NR_setfsgid] = AT_EXIT,
  [__NR_socket] = AT_EXIT, [__NR_connect] = AT_EXIT, [__NR_bind] = AT_EXIT, [__NR_listen] = AT_EXIT,
  [__NR_accept] = AT_EXIT, [__NR_accept4] = AT_EXIT, [__NR_sendto] = AT_EXIT, [__NR_recvfrom] = AT_EXIT,
  [__NR_sendmsg] = AT_EXIT, [__NR_recvmsg] = AT_EXIT,
  [__NR_truncate] = AT_EXIT, [__NR_ftruncate] = AT_EXIT, [__NR_getdents] = AT_EXIT, [__NR_getdents64] = AT_EXIT,
  [__NR_chdir] = AT_EXIT, [__NR_fchdir] = AT_EXIT,
  [__NR_rename] = AT_EXIT, [__NR_renameat] = AT_EXIT, [__NR_renameat2] = AT_EXIT,
  [__NR_unlink] = AT_EXIT, [__NR_unlinkat] = AT_EXIT, [__NR_rmdir] = AT_EXIT,
  [__NR_mkdir] = AT_EXIT, [__NR_mkdirat] = AT_EXIT,
  [__NR_chmod] = AT_EXIT, [__NR_fchmod] = AT_EXIT, [__NR_fchmodat] = AT_EXIT, [__NR_fchmodat2] = AT_EXIT,
  [__NR_chown] = AT_EXIT, [__NR_fchown] = AT_EXIT, [__NR_lchown] = AT_EXIT, [__NR_fchownat] = AT_EXIT,
  [__NR_link] = AT_EXIT, [__NR_linkat] = AT_EXIT, [__NR_symlink] = AT_EXIT, [__NR_symlinkat] = AT_EXIT,
  [__NR_ptrace] = AT_EXIT, [__NR_init_module] = AT_EXIT, [__NR_finit_module] = AT_EXIT,
  [__NR_delete_module] = AT_EXIT, [__NR_mount] = AT_EXIT, [__NR_umount2] = AT_EXIT,
};

/* The 64-bit call each decoded i386 call is recorded as, plus one (0: an i386 call only counted). */
#define COMPAT_ENTRY(name, nr32, nr64) [nr32] = (nr64) + 1,
static const __u16 from_compat[NR_TABLE] = {COMPAT_CALLS(COMPAT_ENTRY)};

/*
 * A call's arguments kept from its entry or read at its exit; a sleep in progress is kept at entry:
 * when the session ends first, it is reported as interrupted. `compat`: an i386 call, whose pointers
 * inside structures are 32-bit.
 */
struct pending {
  __u32 nr;
  __u32 gen;
  __u64 ts;
  __u64 args[6];
  __u64 extra[2];
  __u32 compat;
  __u32 spare;
};

static const struct proc zero_proc;

/* Room for the data items, plus one more string or buffer past DATA_MAX (offsets wrap at DATA_MAX). */
struct scratch {
  struct syscall_rec r;
  __u8 data[DATA_MAX + 2 * STR_MAX + 16];
};

struct {
  __uint(type, BPF_MAP_TYPE_RINGBUF);
  __uint(max_entries, 32 << 20);
} events SEC(".maps");

struct {
  __uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
  __uint(max_entries, 1);
  __type(key, __u32);
  __type(value, __u64);
} drops SEC(".maps");

struct {
  __uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
  __uint(max_entries, 1);
  __type(key, __u32);
  __type(value, struct scratch);
} scratch SEC(".maps");

struct {
  __uint(type, BPF_MAP_TYPE_LRU_HASH);
  __uint(max_entries, 16384);
  __type(key, __u32);
  __type(value, struct pending);
} pending SEC(".maps");

struct {
  __uint(type, BPF_MAP_TYPE_LRU_HASH);
  __uint(max_entries, 65536);
  __type(key, __u32);
  __type(value, __u32);
} seen SEC(".maps");

/* Per process (see struct proc in monitor.h): found once per system call, for its count. */
struct {
  __uint(type, BPF_MAP_TYPE_HASH);
  __uint(max_entries, 16384);
  __uint(map_flags, BPF_F_NO_PREALLOC);
  __type(key, __u32);
  __type(value, struct proc);
} procs SEC(".maps");

/*
 * Walked whole at every process exit (bpf_for_each_map_elem): kept small. A total that finds no room
 * is counted as a drop.
 */
struct {
  __uint(type, BPF_MAP_TYPE_HASH);
  __uint(max_entries, 8192);
  __type(key, struct fd_key);
  __type(value, __u64);
} writes SEC(".maps");

/*
 * Updating a map of maps makes the kernel wait until every BPF program running has finished: after
 * clearing `armed_cgroup`, the loader updates this one to know that no record of the session is still
 * being written.
 */
struct barrier_inner {
  __uint(type, BPF_MAP_TYPE_ARRAY);
  __uint(max_entries, 1);
  __type(key, __u32);
  __type(value, __u32);
} barrier_inner SEC(".maps");

struct {
  __uint(type, BPF_MAP_TYPE_ARRAY_OF_MAPS);
  __uint(max_entries, 1);
  __type(key, __u32);
  __array(values, struct barrier_inner);
} barrier SEC(".maps") = {
  .values = {&barrier_inner},
};

static __always_inline bool traced(void) {
  __u64 id = armed_cgroup;
  if (!id) return false;
  return bpf_get_current_ancestor_cgroup_id(armed_level) == id;
}

static __always_inline void dropped(void) {
  __u32 zero = 0;
  __u64 *count = bpf_map_lookup_elem(&drops, &zero);
  if (count) *count += 1;
}

static __always_inline __u64 wake_flag(void) {
  return bpf_ringbuf_query(&events, BPF_RB_AVAIL_DATA) >= wake_bytes ? BPF_RB_FORCE_WAKEUP : BPF_RB_NO_WAKEUP;
}

static __always_inline void emit(void *data, __u64 size) {
  if (bpf_ringbuf_output(&events, data, size, wake_flag())) dropped();
}

static __always_inline void header(struct rec_header *h, __u16 kind, __u64 ts, __u32 tid, __u32 tgid, __u16 nr, __u32 size) {
  h->ts = ts;
  h->tid = tid;
  h->tgid = tgid;
  h->kind = kind;
  h->nr = nr;
  h->size = size;
  h->repeated = 0;
  h->spare = 0;
}

/* The task's id at the deepest level of its pid (the pid namespace it lives in). */
static __always_inline __u32 innermost_tid(struct task_struct *task) {
  struct pid *pid = BPF_CORE_READ(task, thread_pid);
  unsigned int level = BPF_CORE_READ(pid, level);
  return BPF_CORE_READ(pid, numbers[level].nr);
}

static __always_inline void send_identity(__u64 ts, __u32 tid, __u32 tgid) {
  struct task_struct *task = (struct task_struct *)bpf_get_current_task();
  struct identity_rec r = {};
  header(&r.h, REC_IDENTITY, ts, tid, tgid, NO_NR, sizeof(r));
  r.pid = tgid;
  r.ppid = BPF_CORE_READ(task, real_parent, tgid);
  bpf_get_current_comm(r.comm, sizeof(r.comm));
  // Read while the thread runs: a process that lives a few milliseconds is gone before anyone could look it up in /proc.
  r.nstid = innermost_tid(task);
  emit(&r, sizeof(r));
}

/* Names the thread (identity record) the first time this session sees it. */
static __always_inline void identify(__u64 ts, __u32 tid, __u32 tgid) {
  __u32 *seen_gen = bpf_map_lookup_elem(&seen, &tid);
  __u32 current = gen;
  if (seen_gen && *seen_gen == current) return;
  bpf_map_update_elem(&seen, &tid, &current, BPF_ANY);
  send_identity(ts, tid, tgid);
}

static __always_inline void send_write_total(__u64 ts, __u32 tid, struct fd_key *key, __u64 bytes) {
  struct write_total_rec r = {};
  header(&r.h, REC_WRITE_TOTAL, ts, tid, key->tgid, NO_NR, sizeof(r));
  r.fd = key->fd;
  r.bytes = bytes;
  emit(&r, sizeof(r));
}

/* Sends what was written through `fd` so far, before the number is closed or reused. */
static __always_inline void flush_writes(__u64 ts, __u32 tid, __u32 tgid, __s32 fd) {
  struct fd_key key = {.tgid = tgid, .fd = fd};
  __u64 *bytes = bpf_map_lookup_elem(&writes, &key);
  if (!bytes) return;
  send_write_total(ts, tid, &key, *bytes);
  bpf_map_delete_elem(&writes, &key);
}

static __always_inline struct proc *proc_of(__u32 tgid) {
  return bpf_map_lookup_elem(&procs, &tgid);
}

/* Whether the current process has one thread: only then does it hold calls back (see below). */
static __always_inline bool single_threaded(void) {
  struct task_struct *task = (struct task_struct *)bpf_get_current_task();
  return BPF_CORE_READ(task, signal, nr_threads) == 1;
}

/* The system call the current thread is in (-1: none), as it entered it; `compat`: a 32-bit one. */
static __always_inline long current_nr(bool *compat) {
  struct task_struct *task = (struct task_struct *)bpf_get_current_task();
  *compat = BPF_CORE_READ(task, thread_info.status) & TS_COMPAT;
  struct pt_regs *regs = (struct pt_regs *)bpf_task_pt_regs(bpf_get_current_task_btf());
  return BPF_CORE_READ(regs, orig_ax);
}

/*
 * Held back. What a process does is sent in order, but three things wait for its next record, so
 * that a loop costs a record per run rather than per call:
 *  - a call record (single-threaded processes only), while the calls that follow are the same call
 *    again, made identically with the same result, each after closing the descriptor it made (the
 *    open/close loop): it is sent once, with the count of repeats (`repeated`). It is sent as soon as
 *    the process makes any other system call or a repeat that may wait (a read, a sleep), and at least
 *    every HOLD_NS: it is late by more than the service's reordering window only when the process
 *    then computes that long without a system call (its events then come after others' in the log);
 *  - a descriptor copy made with fcntl(F_DUPFD): programs such as find copy a directory's descriptor
 *    only to fstat and close it, thousands of times. Forgotten when the copy is closed first, unused;
 *  - the descriptors closed since the last record, sent as one record before the next.
 * The call and the copy are never both held (each is sent before the other is held); closes are the
 * newest.
 */
#define HOLD_NS 100000000ull

static __always_inline void send_held_call(struct proc *p) {
  __u32 size = p->call_size;
  if (!size) return;
  // 1 to HELD_MAX in a form the verifier follows (hold() kept no more).
  asm volatile("" : "+r"(size));
  size = ((size - 1) & (HELD_MAX - 1)) + 1;
  ((struct rec_header *)p->call)->repeated = p->repeated;
  emit(p->call, size);
  p->call_size = 0;
  p->repeated = 0;
}

static __always_inline void send_held_dup(struct proc *p, __u32 tgid) {
  if (!p->dup.nr) return;
  struct syscall_rec rec = {};
  header(&rec.h, REC_SYSCALL, p->dup.ts, p->dup.tid, tgid, p->dup.nr, sizeof(rec));
  rec.ret = p->dup.newfd;
  rec.args[0] = (__u32)p->dup.oldfd;
  p->dup.nr = 0;
  emit(&rec, sizeof(rec));
}

/*
 * Closes `from` to `to`, stamped with the time of the record that follows them: they come before it,
 * after what was held before them.
 */
static __always_inline void send_closes(struct proc *p, __u32 from, __u32 to, __u64 ts, __u32 tid, __u32 tgid) {
  if (to > CLOSES_MAX) to = CLOSES_MAX;
  if (from >= to) return;
  struct closes_rec r = {};
  header(&r.h, REC_CLOSES, ts, tid, tgid, NO_NR, sizeof(r));
  r.count = to - from;
  for (int i = 0; i < CLOSES_MAX; i++) {
    __u32 at = from + i;
    if (at >= to) break;
    r.fds[i] = p->closed[at & (CLOSES_MAX - 1)];
  }
  emit(&r, sizeof(r));
}

/* Everything held, in the order it happened: the call, or the closes before the copy, the copy, the rest. */
static __always_inline void send_held(struct proc *p, __u64 ts, __u32 tid, __u32 tgid) {
  send_held_call(p);
  __u32 before = p->dup.nr ? p->closed_before_dup : 0;
  send_closes(p, 0, before, ts, tid, tgid);
  send_held_dup(p, tgid);
  send_closes(p, before, p->nclosed, ts, tid, tgid);
  p->nclosed = 0;
  p->closed_before_dup = 0;
}

/*
 * Before any record of a thread: its name, the first time, and what its process holds back. A global
 * function, verified once rather than at each of its many callers.
 */
__noinline int before_record(__u64 ts, __u32 tid, __u32 tgid) {
  identify(ts, tid, tgid);
  struct proc *p = proc_of(tgid);
  if (p) send_held(p, ts, tid, tgid);
  return 0;
}

static __always_inline void add_written(__u32 tgid, __s32 fd, __u64 bytes) {
  struct fd_key key = {.tgid = tgid, .fd = fd};
  __u64 *total = bpf_map_lookup_elem(&writes, &key);
  if (total) {
    __sync_fetch_and_add(total, bytes);
    return;
  }
  if (bpf_map_update_elem(&writes, &key, &bytes, BPF_NOEXIST) == 0) return;
  total = bpf_map_lookup_elem(&writes, &key);
  if (total) __sync_fetch_and_add(total, bytes);
  else dropped();
}

/* Where a call is counted in a process's counts. */
static __always_inline __u32 count_slot(long nr, bool compat) {
  __u32 slot = (nr & (NR_TABLE - 1)) + (compat ? NR_TABLE : 0);
  // Masked where clang cannot prove it useless: older verifiers (the guest's 6.1) lose the bound of
  // the sum above, and refuse the index without it.
  barrier_var(slot);
  return slot & (COUNT_SLOTS - 1);
}

/* Counts the call for its process; returns the process's entry. */
static __always_inline struct proc *count(__u32 tgid, long nr, bool compat) {
  __u32 slot = count_slot(nr, compat);
  struct proc *p = proc_of(tgid);
  if (!p) {
    bpf_map_update_elem(&procs, &tgid, &zero_proc, BPF_NOEXIST);
    p = proc_of(tgid);
    if (!p) {
      dropped();
      return NULL;
    }
  }
  __sync_fetch_and_add(&p->counts[slot], 1);
  return p;
}

static __always_inline bool is_socket(struct task_struct *task, __u64 fd) {
  struct fdtable *fdt = BPF_CORE_READ(task, files, fdt);
  if (!fdt || fd >= BPF_CORE_READ(fdt, max_fds)) return false;
  struct file **fds = BPF_CORE_READ(fdt, fd);
  struct file *file = NULL;
  bpf_probe_read_kernel(&file, sizeof(file), &fds[fd]);
  if (!file) return false;
  umode_t mode = BPF_CORE_READ(file, f_inode, i_mode);
  return (mode & S_IFMT) == S_IFSOCK;
}

/* A timespec at `ptr` into a call's extra numbers. */
static __always_inline void read_timespec(__u64 ptr, __u64 extra[2]) {
  if (ptr) bpf_probe_read_user(extra, 16, (void *)ptr);
}

static __always_inline void on_close(struct proc *p, __u64 ts, __u32 tid, __u32 tgid, __s32 fd) {
  struct fd_key key = {.tgid = tgid, .fd = fd};
  bool written = bpf_map_lookup_elem(&writes, &key) != NULL;
  // A held copy closed before anything used it: neither is worth a record.
  if (p->dup.nr && p->dup.newfd == fd && !written) {
    p->dup.nr = 0;
    return;
  }
  if (written) {
    before_record(ts, tid, tgid);
    flush_writes(ts, tid, tgid, fd);
  }
  if (p->nclosed >= CLOSES_MAX) before_record(ts, tid, tgid);
  __u32 n = p->nclosed;
  barrier_var(n);
  if (n >= CLOSES_MAX) return;
  p->closed[n] = fd;
  p->nclosed = n + 1;
  // Threads of one process could close at once: theirs are sent at once.
  if (!single_threaded()) before_record(ts, tid, tgid);
}

/* Decoded calls that can wait for another program or for time (an open of a FIFO can too, but rarely). */
static __always_inline bool may_block(long nr) {
  switch (nr) {
  case __NR_read: case __NR_readv: case __NR_write: case __NR_writev: case __NR_recvfrom: case __NR_recvmsg:
  case __NR_sendto: case __NR_sendmsg: case __NR_connect: case __NR_accept: case __NR_accept4:
  case __NR_nanosleep: case __NR_clock_nanosleep:
    return true;
  }
  return false;
}

/* The 64-bit call a socketcall sub-call is (-1: one not decoded), and how many arguments it reads. */
static __always_inline long socketcall_nr(__u64 call, __u32 *nargs) {
#define SOCKETCALL_CASE(name, sub, nr64, count) \
  if (call == (sub)) {                          \
    *nargs = (count);                           \
    return (nr64);                              \
  }
  SOCKETCALLS(SOCKETCALL_CASE)
  return -1;
}

/* The 64-bit call an i386 call is decoded as, known at its entry (-1: one only counted). */
static __always_inline long compat_call_at_entry(long nr, struct pt_regs *regs) {
  if (nr == NR32_socketcall) {
    __u32 nargs;
    return socketcall_nr((__u32)BPF_CORE_READ(regs, bx), &nargs);
  }
  if (nr < 0 || nr >= NR_TABLE) return -1;
  return (long)from_compat[nr] - 1;
}

/*
 * An i386 call's arguments (ebx, ecx, edx, esi, edi, ebp), as the 64-bit call it is decoded as reads
 * them; returns that call (-1: none). socketcall's come from the array its second argument points to;
 * mmap2's offset counts pages.
 */
static __always_inline long compat_call_at_exit(long nr, struct pt_regs *regs, struct pending *c) {
  c->compat = 1;
  c->args[0] = (__u32)BPF_CORE_READ(regs, bx);
  c->args[1] = (__u32)BPF_CORE_READ(regs, cx);
  c->args[2] = (__u32)BPF_CORE_READ(regs, dx);
  c->args[3] = (__u32)BPF_CORE_READ(regs, si);
  c->args[4] = (__u32)BPF_CORE_READ(regs, di);
  c->args[5] = (__u32)BPF_CORE_READ(regs, bp);
  if (nr == NR32_socketcall) {
    __u32 nargs = 0;
    long call = socketcall_nr(c->args[0], &nargs);
    __u64 from = c->args[1];
    for (int i = 0; i < 6; i++) {
      c->args[i] = 0;
      // Little-endian: a 32-bit word read into the low half of a zeroed 64-bit one.
      if (i < nargs && bpf_probe_read_user(&c->args[i], 4, (void *)(from + i * 4))) return -1;
    }
    return call;
  }
  long call = compat_call_at_entry(nr, regs);
  if (call == __NR_mmap) c->args[5] <<= 12;
  return call;
}

/*
 * raw_syscalls are attached as raw tracepoints: they run on every system call of the host, and a raw
 * tracepoint gets the registers as they are, where a perf tracepoint first builds a record of them.
 * Decoded calls are read at their exit, from the registers the call entered with (still in pt_regs);
 * only sleeps are also noted at entry, to be reported if the session ends while they last.
 */
SEC("raw_tracepoint/sys_enter")
int sys_enter(struct bpf_raw_tracepoint_args *ctx) {
  if (!traced()) return 0;
  long nr = ctx->args[1];
  if (nr < 0) return 0;
  __u64 pid_tgid = bpf_get_current_pid_tgid();
  __u32 tgid = pid_tgid >> 32, tid = (__u32)pid_tgid;
  struct task_struct *task = (struct task_struct *)bpf_get_current_task();
  bool compat = BPF_CORE_READ(task, thread_info.status) & TS_COMPAT;
  struct proc *p = count(tgid, nr, compat);
  if (!p) return 0;
  struct pt_regs *regs = (struct pt_regs *)ctx->args[0];
  long call = compat ? compat_call_at_entry(nr, regs) : nr;
  // A held call is sent as soon as the process does anything but repeat it (or close), and before a
  // repeat that may wait long: it would be late by as long.
  if (p->call_size && (call < 0 || (call != __NR_close && (call != ((struct rec_header *)p->call)->nr || may_block(call))))) send_held_call(p);
  if (call < 0 || call >= NR_TABLE) return 0;
  if (call == __NR_close) {
    on_close(p, bpf_ktime_get_ns(), tid, tgid, (__s32)(compat ? BPF_CORE_READ(regs, bx) : BPF_CORE_READ(regs, di)));
    return 0;
  }
  // An i386 program's sleeps (32-bit timespecs) are only counted.
  if (compat || (nr != __NR_nanosleep && nr != __NR_clock_nanosleep)) return 0;
  struct pending s = {.nr = nr, .gen = gen, .ts = bpf_ktime_get_ns()};
  s.args[0] = BPF_CORE_READ(regs, di);
  s.args[1] = BPF_CORE_READ(regs, si);
  s.args[2] = BPF_CORE_READ(regs, dx);
  read_timespec(nr == __NR_nanosleep ? s.args[0] : s.args[2], s.extra);
  bpf_map_update_elem(&pending, &tid, &s, BPF_ANY);
  return 0;
}

/* Appends a string item (without its NUL) at `off`; returns the offset after it. */
static __always_inline __u32 put_str(struct scratch *s, __u32 off, __u64 ptr) {
  off &= DATA_MAX - 1;
  long n = 0;
  if (ptr) n = bpf_probe_read_user_str(&s->data[off + 2], STR_MAX, (void *)ptr);
  __u32 len = n > 0 ? (n - 1) & (STR_MAX - 1) : 0;
  s->data[off] = len & 0xff;
  s->data[(off + 1) & (DATA_MAX - 1)] = len >> 8;
  return off + 2 + len;
}

/* Appends a buffer item of at most `max` (<= STR_MAX) bytes; nothing when it cannot be read. */
static __always_inline __u32 put_blob(struct scratch *s, __u32 off, __u64 ptr, __s64 len, __u32 max) {
  off &= DATA_MAX - 1;
  __u32 n = len <= 0 ? 0 : (len > max ? max : len);
  // Hidden from the compiler, so that the mask the verifier needs is not optimised away.
  asm volatile("" : "+r"(n));
  n &= 2 * STR_MAX - 1;
  if (!ptr || (n && bpf_probe_read_user(&s->data[off + 2], n, (void *)ptr))) n = 0;
  s->data[off] = n & 0xff;
  s->data[(off + 1) & (DATA_MAX - 1)] = n >> 8;
  return off + 2 + n;
}

/*
 * A failed exec's argv, read from the caller's array (of 32-bit pointers for an i386 program): the
 * strings one after another, each with its NUL.
 */
static __always_inline __u32 put_argv(struct scratch *s, __u32 off, __u64 argv, bool compat) {
  __u32 width = compat ? 4 : 8;
  off &= DATA_MAX - 1;
  __u32 start = off;
  off += 2;
  for (int i = 0; i < 32 && argv; i++) {
    __u64 arg = 0;
    asm volatile("" : "+r"(width));
    width &= 8 | 4;
    if (width == 0 || bpf_probe_read_user(&arg, width, (void *)(argv + i * width)) || !arg) break;
    off &= DATA_MAX - 1;
    long n = bpf_probe_read_user_str(&s->data[off], 256, (void *)arg);
    if (n <= 0) break;
    off += n & 511;
  }
  __u32 len = (off - start - 2) & 0xffff;
  s->data[start] = len & 0xff;
  s->data[(start + 1) & (DATA_MAX - 1)] = len >> 8;
  return off;
}

/* The first of the iovecs at `ptr` (an i386 program's: two 32-bit words): its buffer and length. */
static __always_inline void read_iovec(__u64 ptr, bool compat, __u64 *base, __u64 *len) {
  *base = 0;
  *len = 0;
  if (!ptr) return;
  if (compat) {
    __u32 iov32[2] = {};
    bpf_probe_read_user(iov32, sizeof(iov32), (void *)ptr);
    *base = iov32[0];
    *len = iov32[1];
    return;
  }
  struct iovec iov = {};
  bpf_probe_read_user(&iov, sizeof(iov), (void *)ptr);
  *base = (__u64)iov.iov_base;
  *len = iov.iov_len;
}

/* The peer address and payload of sendmsg/recvmsg: msg_name, then the first iovec's bytes. */
static __always_inline __u32 put_msghdr(struct scratch *s, __u32 off, __u64 msg, long ret, bool compat) {
  __u64 name = 0, namelen = 0, iovs = 0, count = 0;
  if (msg && compat) {
    // compat_msghdr: msg_name, msg_namelen, msg_iov, msg_iovlen, as 32-bit words.
    __u32 hdr32[4] = {};
    bpf_probe_read_user(hdr32, sizeof(hdr32), (void *)msg);
    name = hdr32[0], namelen = hdr32[1], iovs = hdr32[2], count = hdr32[3];
  } else if (msg) {
    struct user_msghdr hdr = {};
    bpf_probe_read_user(&hdr, sizeof(hdr), (void *)msg);
    name = (__u64)hdr.msg_name, namelen = hdr.msg_namelen, iovs = (__u64)hdr.msg_iov, count = hdr.msg_iovlen;
  }
  off = put_blob(s, off, name, namelen, SOCKADDR_MAX);
  __u64 base, len;
  read_iovec(count ? iovs : 0, compat, &base, &len);
  return put_blob(s, off, base, ret < (long)len ? ret : (long)len, PAYLOAD_MAX);
}

/* write/writev/read/readv on a socket: no address, the payload from the buffer or the first iovec. */
static __always_inline __u32 put_stream(struct scratch *s, __u32 off, long nr, __u64 buf, long ret, bool compat) {
  off = put_blob(s, off, 0, 0, 0);
  if (nr == __NR_writev || nr == __NR_readv) {
    __u64 base, len;
    read_iovec(buf, compat, &base, &len);
    return put_blob(s, off, base, ret < (long)len ? ret : (long)len, PAYLOAD_MAX);
  }
  return put_blob(s, off, buf, ret, PAYLOAD_MAX);
}

/* The data items of one call (their order is what the loader reads). */
static __always_inline __u32 put_items(struct scratch *s, long nr, struct pending *p, long ret) {
  __u64 *a = p->args;
  __u32 off = 0;
  switch (nr) {
  case __NR_open: case __NR_creat: case __NR_chdir: case __NR_unlink: case __NR_rmdir: case __NR_mkdir:
  case __NR_chmod: case __NR_chown: case __NR_lchown: case __NR_truncate: case __NR_umount2:
  case __NR_delete_module: case __NR_memfd_create:
    return put_str(s, off, a[0]);
  case __NR_openat: case __NR_mkdirat: case __NR_unlinkat: case __NR_fchmodat: case __NR_fchmodat2:
  case __NR_fchownat:
    return put_str(s, off, a[1]);
  case __NR_openat2:
    off = put_str(s, off, a[1]);
    return put_blob(s, off, a[2], 16, 16);
  case __NR_rename: case __NR_link: case __NR_symlink:
    off = put_str(s, off, a[0]);
    return put_str(s, off, a[1]);
  case __NR_renameat: case __NR_renameat2: case __NR_linkat:
    off = put_str(s, off, a[1]);
    return put_str(s, off, a[3]);
  case __NR_symlinkat:
    off = put_str(s, off, a[0]);
    return put_str(s, off, a[2]);
  case __NR_execve:
    off = put_str(s, off, a[0]);
    return put_argv(s, off, a[1], p->compat);
  case __NR_execveat:
    off = put_str(s, off, a[1]);
    return put_argv(s, off, a[2], p->compat);
  case __NR_connect: case __NR_bind:
    return put_blob(s, off, a[1], a[2], SOCKADDR_MAX);
  case __NR_sendto:
    off = put_blob(s, off, a[4], a[5], SOCKADDR_MAX);
    return put_blob(s, off, a[1], ret, PAYLOAD_MAX);
  case __NR_recvfrom: {
    __u32 addrlen = 0;
    if (a[5]) bpf_probe_read_user(&addrlen, sizeof(addrlen), (void *)a[5]);
    off = put_blob(s, off, a[4], addrlen, SOCKADDR_MAX);
    return put_blob(s, off, a[1], ret, PAYLOAD_MAX);
  }
  case __NR_sendmsg: case __NR_recvmsg:
    return put_msghdr(s, off, a[1], ret, p->compat);
  case __NR_write: case __NR_writev: case __NR_read: case __NR_readv:
    return put_stream(s, off, nr, a[1], ret, p->compat);
  case __NR_mount:
    off = put_str(s, off, a[0]);
    off = put_str(s, off, a[1]);
    return put_str(s, off, a[2]);
  case __NR_prctl:
    return a[0] == PR_SET_NAME ? put_str(s, off, a[1]) : off;
  case __NR_capset:
    off = put_blob(s, off, a[0], 8, 8);
    return put_blob(s, off, a[1], 12, 12);
  }
  return off;
}

/* The descriptors a pipe or socketpair made, read from the caller's array into the extra numbers. */
static __always_inline void read_pipe_fds(long nr, struct pending *c, long ret) {
  if (nr != __NR_pipe && nr != __NR_pipe2 && nr != __NR_socketpair) return;
  __s32 fds[2] = {-1, -1};
  if (ret == 0) bpf_probe_read_user(fds, sizeof(fds), (void *)c->args[nr == __NR_socketpair ? 3 : 0]);
  c->extra[0] = (__u32)fds[0];
  c->extra[1] = (__u32)fds[1];
}

/* Calls whose result is a new descriptor. */
static __always_inline bool makes_fd(long nr) {
  switch (nr) {
  case __NR_open: case __NR_openat: case __NR_openat2: case __NR_creat: case __NR_socket:
  case __NR_accept: case __NR_accept4: case __NR_memfd_create: case __NR_dup: case __NR_dup2:
  case __NR_dup3: case __NR_fcntl:
    return true;
  }
  return false;
}

/* The descriptors a call made: what was written through their numbers before is sent first. */
static __always_inline void flush_made(__u64 ts, __u32 tid, __u32 tgid, long nr, struct pending *c, long ret) {
  if (makes_fd(nr)) {
    if (ret >= 0) flush_writes(ts, tid, tgid, (__s32)ret);
  } else if (nr == __NR_pipe || nr == __NR_pipe2 || nr == __NR_socketpair) {
    if ((__s32)c->extra[0] >= 0) flush_writes(ts, tid, tgid, (__s32)c->extra[0]);
    if ((__s32)c->extra[1] >= 0) flush_writes(ts, tid, tgid, (__s32)c->extra[1]);
  }
}

/*
 * Whether the record in scratch repeats the held call: the same bytes but for the time, and nothing
 * else done between but closing the descriptor the held call made (for calls that make one).
 */
static __always_inline bool repeats(struct proc *p, struct scratch *s, __u32 size, long nr, long ret, __u64 ts) {
  if (p->call_size != size || ts - ((struct rec_header *)p->call)->ts > HOLD_NS) return false;
  if (makes_fd(nr) && ret >= 0) {
    if (p->nclosed != 1 || p->closed[0] != (__s32)ret) return false;
  } else if (p->nclosed) {
    return false;
  }
  __u64 *held = p->call, *now = (__u64 *)s;
  __u32 words = (size + 7) / 8;
  for (int i = 1; i < HELD_MAX / 8; i++) {
    if (i >= words) break;
    if (held[i] != now[i]) return false;
  }
  return true;
}

static __always_inline void hold(struct proc *p, struct scratch *s, __u32 size) {
  __u32 n = (size + 7) & ~7u;
  asm volatile("" : "+r"(n));
  if (n > HELD_MAX) return;
  n = ((n - 1) & (HELD_MAX - 1)) + 1;
  bpf_probe_read_kernel(p->call, n, s);
  p->call_size = size;
  p->repeated = 0;
}

static __always_inline void on_return(long nr, struct pending *c, long ret, __u32 tid, __u32 tgid) {
  switch (nr) {
  case __NR_write: case __NR_writev: case __NR_pwrite64: case __NR_pwritev: case __NR_pwritev2:
    if (!c->extra[0]) {
      if (ret > 0) add_written(tgid, (__s32)c->args[0], ret);
      return;
    }
    break;
  case __NR_clone: case __NR_clone3: case __NR_fork: case __NR_vfork:
    // Recorded as the process is made (sched_process_fork), before the child runs.
    return;
  case __NR_execve: case __NR_execveat:
    // A successful exec is recorded with the new program (sched_process_exec).
    if (ret >= 0) return;
    break;
  case __NR_getdents: case __NR_getdents64:
    // The end of a directory is no news.
    if (ret == 0) return;
    break;
  case __NR_fcntl:
    if (ret >= 0) {
      __u64 now = bpf_ktime_get_ns();
      struct proc *p = proc_of(tgid);
      struct fd_key made = {.tgid = tgid, .fd = (__s32)ret};
      // The closes before a copy wait with it (find closes and copies for every directory), unless
      // another copy or a total written through the new number must go first.
      if (!p || p->dup.nr || bpf_map_lookup_elem(&writes, &made)) {
        before_record(now, tid, tgid);
      } else {
        identify(now, tid, tgid);
        send_held_call(p);
      }
      flush_writes(now, tid, tgid, (__s32)ret);
      if (p) {
        p->dup = (struct held_dup){.ts = now, .tid = tid, .oldfd = (__s32)c->args[0], .newfd = (__s32)ret, .nr = nr};
        p->closed_before_dup = p->nclosed;
      }
      return;
    }
    break;
  }
  __u32 zero = 0;
  struct scratch *s = bpf_map_lookup_elem(&scratch, &zero);
  if (!s) return;
  __u64 ts = bpf_ktime_get_ns();
  read_pipe_fds(nr, c, ret);
  __u32 size = sizeof(s->r) + put_items(s, nr, c, ret);
  // Hidden from the compiler, so that the bound the verifier needs is not optimised away.
  asm volatile("" : "+r"(size));
  if (size > sizeof(*s)) size = sizeof(*s);
  header(&s->r.h, REC_SYSCALL, ts, tid, tgid, nr, size);
  s->r.ret = ret;
  for (int i = 0; i < 6; i++) s->r.args[i] = c->args[i];
  s->r.extra[0] = c->extra[0];
  s->r.extra[1] = c->extra[1];
  struct proc *p = NULL;
  if (size <= HELD_MAX && single_threaded()) p = proc_of(tgid);
  if (p && p->call_size && repeats(p, s, size, nr, ret, ts)) {
    p->repeated++;
    p->nclosed = 0;
    return;
  }
  before_record(ts, tid, tgid);
  flush_made(ts, tid, tgid, nr, c, ret);
  if (p && nr != __NR_pipe && nr != __NR_pipe2 && nr != __NR_socketpair) hold(p, s, size);
  else emit(s, size);
}

/* Reads at exit what the record needs from the call's memory; false for calls that make no record. */
static __always_inline bool read_at_exit(struct task_struct *task, long nr, struct pending *c) {
  switch (nr) {
  case __NR_write: case __NR_writev:
    c->extra[0] = is_socket(task, c->args[0]);
    break;
  case __NR_read: case __NR_readv:
    // Only what is received from sockets is recorded.
    if (!is_socket(task, c->args[0])) return false;
    c->extra[0] = 1;
    break;
  case __NR_fcntl:
    return c->args[1] == F_DUPFD || c->args[1] == F_DUPFD_CLOEXEC;
  case __NR_mmap: case __NR_mprotect:
    return c->args[2] & PROT_EXEC;
  case __NR_nanosleep:
    read_timespec(c->args[0], c->extra);
    break;
  case __NR_clock_nanosleep:
    read_timespec(c->args[2], c->extra);
    break;
  case __NR_timerfd_settime:
    // struct itimerspec: the interval, then the first expiry.
    if (c->args[2]) read_timespec(c->args[2] + 16, c->extra);
    break;
  }
  return true;
}

/* The registers of x86-64's pt_regs from r10 to di, in their order there (the entry code's layout). */
struct arg_regs {
  __u64 r10, r9, r8, ax, cx, dx, si, di;
};
_Static_assert(__builtin_offsetof(struct pt_regs, di) - __builtin_offsetof(struct pt_regs, r10) ==
               __builtin_offsetof(struct arg_regs, di), "pt_regs holds r10 to di together");

SEC("raw_tracepoint/sys_exit")
int sys_exit(struct bpf_raw_tracepoint_args *ctx) {
  struct pt_regs *regs = (struct pt_regs *)ctx->args[0];
  long nr = BPF_CORE_READ(regs, orig_ax);
  // Calls that are only counted cost two array reads here.
  if (nr < 0 || nr >= NR_TABLE || (decoded[nr] != AT_EXIT && !from_compat[nr] && nr != NR32_socketcall)) return 0;
  if (!traced()) return 0;
  struct task_struct *task = (struct task_struct *)bpf_get_current_task();
  bool compat = BPF_CORE_READ(task, thread_info.status) & TS_COMPAT;
  if (!compat && decoded[nr] != AT_EXIT) return 0;
  __u64 pid_tgid = bpf_get_current_pid_tgid();
  __u32 tgid = pid_tgid >> 32, tid = (__u32)pid_tgid;
  // A process seen at no entry yet made this call before it was traced (the write that joined the cgroup).
  if (!proc_of(tgid)) return 0;
  if (compat) {
    // An i386 call, decoded as the 64-bit call it does the same as; its sleeps (32-bit timespecs) are only counted.
    struct pending c = {};
    long call = compat_call_at_exit(nr, regs, &c);
    if (call < 0 || call >= NR_TABLE || decoded[call] != AT_EXIT) return 0;
    if (call == __NR_nanosleep || call == __NR_clock_nanosleep || call == __NR_timerfd_settime) return 0;
    c.nr = call;
    if (read_at_exit(task, call, &c)) on_return(call, &c, (long)ctx->args[1], tid, tgid);
    return 0;
  }
  // An absolute sleep's length is counted from its entry: the time noted then goes in the unused 6th argument.
  __u64 entered = 0;
  if (nr == __NR_nanosleep || nr == __NR_clock_nanosleep) {
    struct pending *sleeping = bpf_map_lookup_elem(&pending, &tid);
    if (sleeping) entered = sleeping->ts;
    bpf_map_delete_elem(&pending, &tid);
  }
  // The x86-64 system call convention: rdi, rsi, rdx, r10, r8, r9, as the call entered. Read in one go
  // without copying all of pt_regs: the stack it took, with before_record's, was more than older
  // verifiers (6.1) allow a program and the function it calls.
  struct arg_regs r;
  bpf_probe_read_kernel(&r, sizeof(r), &regs->r10);
  struct pending c = {.nr = nr, .args = {r.di, r.si, r.dx, r.r10, r.r8, nr == __NR_clock_nanosleep ? entered : r.r9}};
  if (read_at_exit(task, nr, &c)) on_return(nr, &c, (long)ctx->args[1], tid, tgid);
  return 0;
}

/* 32-bit numbers of the calls that execute a program. */
#define NR32_execve 11
#define NR32_execveat 358

static __always_inline bool is_exec(long nr, bool compat) {
  return compat ? nr == NR32_execve || nr == NR32_execveat : nr == __NR_execve || nr == __NR_execveat;
}

/* The call's number for a record's header, when it is one of `a`..`d` (64-bit): NO_NR otherwise. */
static __always_inline __u16 named(long nr, bool compat, long a, long b, long c, long d) {
  if (compat || (nr != a && nr != b && nr != c && nr != d)) return NO_NR;
  return nr;
}

SEC("tracepoint/sched/sched_process_fork")
int process_fork(struct trace_event_raw_sched_process_fork *ctx) {
  if (!traced()) return 0;
  __u64 pid_tgid = bpf_get_current_pid_tgid();
  __u32 tgid = pid_tgid >> 32, tid = (__u32)pid_tgid;
  bool compat;
  long nr = current_nr(&compat);
  struct pt_regs *regs = (struct pt_regs *)bpf_task_pt_regs(bpf_get_current_task_btf());
  __u64 flags = 0;
  if (!compat && nr == __NR_clone) flags = BPF_CORE_READ(regs, di);
  else if (!compat && nr == __NR_clone3) {
    __u64 args = BPF_CORE_READ(regs, di);
    if (args) bpf_probe_read_user(&flags, sizeof(flags), (void *)args);
  }
  __u64 ts = bpf_ktime_get_ns();
  if (flags & CLONE_THREAD) {
    // Threads hold nothing back: what the process holds goes before the new thread's first record.
    struct proc *p = proc_of(tgid);
    if (p && p->call_size) {
      identify(ts, tid, tgid);
      send_held_call(p);
    }
    return 0;
  }
  before_record(ts, tid, tgid);
  struct fork_rec r = {};
  header(&r.h, REC_FORK, ts, tid, tgid, named(nr, compat, __NR_clone, __NR_clone3, __NR_fork, __NR_vfork), sizeof(r));
  r.child = ctx->child_pid;
  emit(&r, sizeof(r));
  return 0;
}

static __always_inline void send_counts(__u64 ts, __u32 tid, __u32 tgid) {
  struct proc *c = proc_of(tgid);
  if (!c) return;
  struct counts_rec *r = bpf_ringbuf_reserve(&events, sizeof(*r), 0);
  if (!r) {
    dropped();
  } else {
    header(&r->h, REC_COUNTS, ts, tid, tgid, NO_NR, sizeof(*r));
    bpf_probe_read_kernel(r->counts, sizeof(r->counts), c->counts);
    bpf_ringbuf_submit(r, wake_flag());
  }
  bpf_map_delete_elem(&procs, &tgid);
}

SEC("tracepoint/sched/sched_process_exec")
int process_exec(struct trace_event_raw_sched_process_exec *ctx) {
  if (!traced()) return 0;
  __u64 pid_tgid = bpf_get_current_pid_tgid();
  __u32 tgid = pid_tgid >> 32, tid = (__u32)pid_tgid;
  __u32 zero = 0;
  struct scratch *s = bpf_map_lookup_elem(&scratch, &zero);
  if (!s) return 0;
  bool compat;
  long nr = current_nr(&compat);
  bool by_call = is_exec(nr, compat);
  __u64 ts = bpf_ktime_get_ns();
  struct proc *p = proc_of(tgid);
  if (p) send_held(p, ts, tid, tgid);
  // What the process called before it became this program is sent now and counted afresh from here: a
  // sample's first process was nestbox's until its exec, and only what follows is the sample's,
  // starting with the exec call itself.
  if (p && by_call) {
    __u32 slot = count_slot(nr, compat);
    if (p->counts[slot]) __sync_fetch_and_add(&p->counts[slot], -1);
  }
  send_counts(ts, tid, tgid);
  if (by_call) count(tgid, nr, compat);
  // The thread has a new name and program: named again.
  __u32 current = gen;
  bpf_map_update_elem(&seen, &tid, &current, BPF_ANY);
  send_identity(ts, tid, tgid);

  __u32 off = 0;
  unsigned short loc = ctx->__data_loc_filename & 0xffff;
  long n = bpf_probe_read_kernel_str(&s->data[2], STR_MAX, (void *)ctx + loc);
  __u32 len = n > 0 ? (n - 1) & (STR_MAX - 1) : 0;
  s->data[0] = len & 0xff;
  s->data[1] = len >> 8;
  off = 2 + len;
  struct task_struct *task = (struct task_struct *)bpf_get_current_task();
  __u64 start = BPF_CORE_READ(task, mm, arg_start);
  __u64 end = BPF_CORE_READ(task, mm, arg_end);
  off = put_blob(s, off, start, end - start, ARGV_MAX);
  __u32 size = sizeof(struct exec_rec) + off;
  asm volatile("" : "+r"(size));
  if (size > sizeof(*s) - sizeof(s->r) + sizeof(struct exec_rec)) size = sizeof(*s) - sizeof(s->r) + sizeof(struct exec_rec);
  // The exec record's items start right after its header: moved there from the syscall layout.
  struct exec_rec *r = (struct exec_rec *)((__u8 *)s->data - sizeof(struct exec_rec));
  header(&r->h, REC_EXEC, ts, tid, tgid, named(nr, compat, __NR_execve, __NR_execveat, __NR_execve, __NR_execve), size);
  emit(r, size);
  return 0;
}

struct flush_ctx {
  __u64 ts;
  __u32 tid;
  __u32 tgid;
};

static long flush_one(struct bpf_map *map, struct fd_key *key, __u64 *bytes, struct flush_ctx *c) {
  if (key->tgid != c->tgid) return 0;
  send_write_total(c->ts, c->tid, key, *bytes);
  bpf_map_delete_elem(map, key);
  return 0;
}

/*
 * Whether the exiting thread is its process's last. Kernels before 6.4 (the qemu guest's 6.1) have no
 * group_dead in the tracepoint; there it fires after do_exit() counted the thread out of
 * signal->live, so the last thread sees no live one left.
 */
static __always_inline bool group_dead(struct trace_event_raw_sched_process_exit *ctx) {
  if (bpf_core_field_exists(ctx->group_dead)) return ctx->group_dead;
  struct task_struct *task = (struct task_struct *)bpf_get_current_task();
  return BPF_CORE_READ(task, signal, live.counter) == 0;
}

SEC("tracepoint/sched/sched_process_exit")
int process_exit(struct trace_event_raw_sched_process_exit *ctx) {
  if (!traced()) return 0;
  __u64 pid_tgid = bpf_get_current_pid_tgid();
  __u32 tgid = pid_tgid >> 32, tid = (__u32)pid_tgid;
  if (group_dead(ctx)) {
    __u64 ts = bpf_ktime_get_ns();
    bool compat;
    long nr = current_nr(&compat);
    before_record(ts, tid, tgid);
    struct flush_ctx c = {.ts = ts, .tid = tid, .tgid = tgid};
    bpf_for_each_map_elem(&writes, flush_one, &c, 0);
    struct task_struct *task = (struct task_struct *)bpf_get_current_task();
    struct exit_rec r = {};
    header(&r.h, REC_EXIT, ts, tid, tgid, named(nr, compat, __NR_exit, __NR_exit_group, __NR_exit, __NR_exit), sizeof(r));
    r.status = BPF_CORE_READ(task, exit_code);
    emit(&r, sizeof(r));
    send_counts(ts, tid, tgid);
  }
  bpf_map_delete_elem(&pending, &tid);
  bpf_map_delete_elem(&seen, &tid);
  return 0;
}

SEC("tracepoint/task/task_rename")
int task_rename(struct trace_event_raw_task_rename *ctx) {
  if (!traced()) return 0;
  __u64 pid_tgid = bpf_get_current_pid_tgid();
  __u32 tgid = pid_tgid >> 32, tid = (__u32)pid_tgid;
  // The kernel naming a new program is no rename by the program.
  bool compat;
  long nr = current_nr(&compat);
  if (is_exec(nr, compat)) return 0;
  // Named after the call that renamed it (prctl, a write to comm) when it is one we decode.
  __u16 by = compat || nr < 0 || nr >= NR_TABLE || !decoded[nr & (NR_TABLE - 1)] ? NO_NR : nr;
  __u64 ts = bpf_ktime_get_ns();
  before_record(ts, tid, tgid);
  struct rename_rec r = {};
  header(&r.h, REC_RENAME, ts, tid, tgid, by, sizeof(r));
  r.target = ctx->pid;
  bpf_probe_read_kernel_str(r.comm, sizeof(r.comm), ctx->newcomm);
  emit(&r, sizeof(r));
  return 0;
}
