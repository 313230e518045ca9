/*
 * The records nestbox's monitor passes from the kernel (monitor.bpf.c) to its loader (monitor.c)
 * through the BPF ring buffer. Shared by both sides: the layout is the contract between them.
 */
#ifndef NESTBOX_MONITOR_H
#define NESTBOX_MONITOR_H

/* Syscall numbers below this are counted in the 64-bit table; compat (32-bit) calls go above it. */
#define NR_TABLE 512
#define COUNT_SLOTS (2 * NR_TABLE)

/* Strings and buffers read from the traced program. */
#define STR_MAX 4096
#define DATA_MAX 16384
#define PAYLOAD_MAX 256
#define SOCKADDR_MAX 128
#define ARGV_MAX 4096

enum record_kind {
  /* A decoded system call: header, ret, its six arguments, two extra numbers, then data items. */
  REC_SYSCALL = 1,
  /* First sight of a thread in this session, or its new program: pid, parent, name. */
  REC_IDENTITY = 2,
  /* Bytes written through a descriptor since it was made, summed in the kernel. */
  REC_WRITE_TOTAL = 3,
  /* A new process (not a thread). */
  REC_FORK = 4,
  /* A program executed: path and argv items. */
  REC_EXEC = 5,
  /* The last thread of a process left. */
  REC_EXIT = 6,
  /* Every system call of a process, counted. */
  REC_COUNTS = 7,
  /* A thread renamed (prctl PR_SET_NAME, a write to /proc/.../comm). */
  REC_RENAME = 8,
  /* Descriptors the process closed since its previous record, in order. */
  REC_CLOSES = 9,
};

struct rec_header {
  __u64 ts; /* CLOCK_MONOTONIC nanoseconds */
  __u32 tid;
  __u32 tgid;
  __u16 kind;
  __u16 nr; /* the system call, when the record comes from one; 0xffff: none */
  __u32 size; /* the whole record's size */
  /* How many more times the same call was made right after this one (a folded run); 0 for most. */
  __u32 repeated;
  __u32 spare;
};

#define NO_NR 0xffff

/*
 * A system call's record. Data items follow in an order fixed per system call (see monitor.bpf.c):
 * each is a little-endian u16 length and that many bytes (strings without their NUL).
 */
struct syscall_rec {
  struct rec_header h;
  __s64 ret;
  __u64 args[6];
  /* Numbers read at entry: timespecs of sleeps, whether the descriptor is a socket. */
  __u64 extra[2];
};

struct identity_rec {
  struct rec_header h;
  __u32 pid;
  __u32 ppid;
  char comm[16];
  /*
   * The thread's id in its innermost pid namespace: what the programs inside a linux machine call it
   * (Wine names processes by these). The same as the tid outside any namespace.
   */
  __u32 nstid;
  __u32 pad;
};

struct write_total_rec {
  struct rec_header h;
  __s64 fd;
  __u64 bytes;
};

struct fork_rec {
  struct rec_header h;
  __u32 child;
  __u32 pad;
};

/* Followed by two items: the path and the argv strings, each ended by a NUL. */
struct exec_rec {
  struct rec_header h;
};

struct exit_rec {
  struct rec_header h;
  __s32 status; /* a wait status: code << 8, or the signal */
  __u32 pad;
};

struct counts_rec {
  struct rec_header h;
  __u32 counts[COUNT_SLOTS];
};

struct rename_rec {
  struct rec_header h;
  __u32 target;
  char comm[16];
};

#define CLOSES_MAX 8

struct closes_rec {
  struct rec_header h;
  __u32 count;
  __s32 fds[CLOSES_MAX];
};

/* The longest call record a process can hold back to fold its repeats. */
#define HELD_MAX 512

/* A descriptor copy made with fcntl(F_DUPFD), held back (see monitor.bpf.c); nr 0: none. */
struct held_dup {
  __u64 ts;
  __u32 tid;
  __s32 oldfd;
  __s32 newfd;
  __u32 nr;
};

/*
 * What the kernel keeps per process: its system calls counted, and what it holds back before sending
 * (see monitor.bpf.c): a call that may be repeated or a descriptor copy, then the descriptors closed since.
 */
struct proc {
  __u32 counts[COUNT_SLOTS];
  /* The held call's record (call_size 0: none), and how many identical calls followed it. */
  __u32 call_size;
  __u32 repeated;
  struct held_dup dup;
  __u32 nclosed;
  /* How many of the closes came before the held descriptor copy. */
  __u32 closed_before_dup;
  __s32 closed[CLOSES_MAX];
  __u64 call[HELD_MAX / 8];
};

/* Per-process write totals are kept under this key. */
struct fd_key {
  __u32 tgid;
  __s32 fd;
};

#endif
