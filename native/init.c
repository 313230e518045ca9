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
 *
 * The qemu guest's analyzer runs its sample through the same supervisor hand-off, as `init --exec
 * COMMAND [ARG...]`: this process hands the listener over and becomes the command, nothing else. There
 * the guest's own init reaps, and the sample keeps the powers a guest's root has.
 *
 * Windows samples need Wine's own processes (wineserver, services, the desktop) running in the sample's
 * pid namespace before the sample, and not as its descendants: `init --prelude N P1..PN COMMAND [ARG...]`
 * first runs the prelude P1..PN (its processes stay, as the init's children), waits for it to exit, then
 * waits for a byte on BLOCK_FD (the host arms its tracer meanwhile) and executes itself anew as
 * `init --continue COMMAND...`, whose run is the usual one: the tracer sees the init start and the sample
 * as its child, and what the prelude left is not the sample's. The prelude alone gets PRELUDE_FD (a pipe
 * to the host) and never the block or supervisor fds.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdbool.h>
#include <fcntl.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/audit.h>
#include <linux/capability.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <linux/securebits.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>
#include "supervised-calls.h"

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

/*
 * Supervision (native/supervisor.c, outside the sandbox). The sample's sandbox inherits one end of a unix
 * socket pair at SUPERVISOR_FD; other sandboxes have nothing there. Just before the first command runs,
 * its process installs a seccomp filter that turns sleeps, timers, waits, executions, deletions (and, when
 * asked, process exits) of both ABIs (native/supervised-calls.h) into user notifications, hands the filter's listener to the supervisor and waits for its word:
 * every process of the sample inherits the filter, and no call of theirs escapes the supervisor. Without
 * a supervisor (no socket, or nobody answers) the command runs unsupervised.
 */
#define SUPERVISOR_FD 6

static void add(struct sock_filter *program, int *length, struct sock_filter instruction) { program[(*length)++] = instruction; }

/* Where a jump lands, patched once the program's end is known. */
#define TO_ALLOW 0xfe
#define TO_NOTIFY 0xff

/* Argument `index`'s low or high 32-bit word in struct seccomp_data (little-endian). */
static unsigned argument_word(int index, bool high) { return (unsigned)(offsetof(struct seccomp_data, args) + 8 * index + (high ? 4 : 0)); }

/* A wait that cannot be long goes on without a notification (see native/supervised-calls.h). */
static void add_wait_check(struct sock_filter *program, int *length, const struct supervised_call *call) {
  if (call->timeout_ms) {
    add(program, length, (struct sock_filter)BPF_STMT(BPF_LD | BPF_W | BPF_ABS, argument_word(call->timeout_ms - 1, false)));
    add(program, length, (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JSET | BPF_K, 0x80000000u, TO_ALLOW, 0));
    add(program, length, (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JGE | BPF_K, WAIT_FLOOR_MS, TO_NOTIFY, TO_ALLOW));
  } else {
    add(program, length, (struct sock_filter)BPF_STMT(BPF_LD | BPF_W | BPF_ABS, argument_word(call->timeout_pointer - 1, false)));
    add(program, length, (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, 0, 0, TO_NOTIFY));
    add(program, length, (struct sock_filter)BPF_STMT(BPF_LD | BPF_W | BPF_ABS, argument_word(call->timeout_pointer - 1, true)));
    add(program, length, (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, 0, TO_ALLOW, TO_NOTIFY));
  }
}

/* The tests of one ABI's watched calls: a match jumps to the NOTIFY (through a wait's check), a miss to the ALLOW. */
static void add_arch(struct sock_filter *program, int *length, unsigned arch, int order) {
  add(program, length, (struct sock_filter)BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, arch)));
  int arch_test = *length;
  add(program, length, (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, arch, 0, 0));
  add(program, length, (struct sock_filter)BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)));
  int tests[SUPERVISED_CALL_COUNT];
  for (size_t i = 0; i < SUPERVISED_CALL_COUNT; i++) {
    const struct supervised_call *call = &SUPERVISED_CALLS[i];
    tests[i] = -1;
    if (call->arch != arch || (call->order != 0 && !(order & call->order))) continue;
    tests[i] = *length;
    add(program, length, (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, call->nr, TO_NOTIFY, 0));
  }
  add(program, length, (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JA | BPF_K, 0, TO_ALLOW, TO_ALLOW));
  for (size_t i = 0; i < SUPERVISED_CALL_COUNT; i++) {
    const struct supervised_call *call = &SUPERVISED_CALLS[i];
    if (tests[i] < 0 || !(call->timeout_ms || call->timeout_pointer)) continue;
    program[tests[i]].jt = (unsigned char)(*length - tests[i] - 1);
    add_wait_check(program, length, call);
  }
  /* Another ABI goes on to the next block. */
  program[arch_test].jf = (unsigned char)(*length - arch_test - 1);
}

static unsigned char jump_to(unsigned char target, int at, int allow, int notify) {
  if (target == TO_ALLOW) return (unsigned char)(allow - at - 1);
  if (target == TO_NOTIFY) return (unsigned char)(notify - at - 1);
  return target;
}

static int install_notifying_filter(int order) {
  struct sock_filter program[8 * SUPERVISED_CALL_COUNT + 16];
  int length = 0;
  add_arch(program, &length, AUDIT_ARCH_X86_64, order);
  add_arch(program, &length, AUDIT_ARCH_I386, order);
  int allow = length, notify = length + 1;
  add(program, &length, (struct sock_filter)BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW));
  add(program, &length, (struct sock_filter)BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_USER_NOTIF));
  for (int at = 0; at < allow; at++) {
    struct sock_filter *op = &program[at];
    if (BPF_CLASS(op->code) != BPF_JMP) continue;
    if (BPF_OP(op->code) == BPF_JA) op->k = (unsigned)(allow - at - 1), op->jt = op->jf = 0;
    else op->jt = jump_to(op->jt, at, allow, notify), op->jf = jump_to(op->jf, at, allow, notify);
  }
  struct sock_fprog fprog = {(unsigned short)length, program};
  return (int)syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, SECCOMP_FILTER_FLAG_NEW_LISTENER, &fprog);
}

static int send_fd(int channel, int fd) {
  char byte = 'L';
  struct iovec iov = {&byte, 1};
  union {
    struct cmsghdr header;
    char space[CMSG_SPACE(sizeof(int))];
  } control;
  memset(&control, 0, sizeof control);
  struct msghdr message = {.msg_iov = &iov, .msg_iovlen = 1, .msg_control = control.space, .msg_controllen = sizeof control.space};
  struct cmsghdr *cmsg = CMSG_FIRSTHDR(&message);
  cmsg->cmsg_level = SOL_SOCKET;
  cmsg->cmsg_type = SCM_RIGHTS;
  cmsg->cmsg_len = CMSG_LEN(sizeof(int));
  memcpy(CMSG_DATA(cmsg), &fd, sizeof(int));
  return sendmsg(channel, &message, MSG_NOSIGNAL) == 1 ? 0 : -1;
}

/* In the first command's process, before it runs: the filter, then the listener to the supervisor. */
static void start_supervision(void) {
  struct stat channel;
  if (fstat(SUPERVISOR_FD, &channel) != 0 || !S_ISSOCK(channel.st_mode)) return;
  /* The supervisor speaks only when spoken to: the service's copy of this socket is closed by now. */
  unsigned char hello = 'H', order = 0, ack = 0;
  /* The service's end was non-blocking, and that flag is the socket's, shared with this descriptor. */
  fcntl(SUPERVISOR_FD, F_SETFL, fcntl(SUPERVISOR_FD, F_GETFL) & ~O_NONBLOCK);
  if (write(SUPERVISOR_FD, &hello, 1) == 1 && read(SUPERVISOR_FD, &order, 1) == 1) {
    int listener = install_notifying_filter(order);
    if (listener < 0) perror("init: seccomp listener");
    /* The supervisor's answer tells that it holds the listener: only then may the first call reach it. */
    else if (send_fd(SUPERVISOR_FD, listener) != 0 || read(SUPERVISOR_FD, &ack, 1) != 1) fprintf(stderr, "init: no supervisor\n");
    if (listener >= 0) close(listener);
  }
  close(SUPERVISOR_FD);
}

#define BLOCK_FD 4
#define INFO_FD 5
#define PRELUDE_FD 7

/* Reaps every child until `awaited` has exited; returns its status (-1 when it was never there). */
static int reap_until(pid_t awaited) {
  int status = 0;
  for (;;) {
    pid_t pid = wait(&status);
    if (pid < 0 && errno == EINTR) continue;
    if (pid < 0) return -1;
    if (pid == awaited) return status;
  }
}

/* Runs the prelude, then waits for the host's word and becomes `init --continue COMMAND...`. */
static int run_prelude(char *self, int count, char **prelude, char **command) {
  pid_t child = fork();
  if (child < 0) {
    perror("init: fork");
    return 125;
  }
  if (child == 0) {
    close(BLOCK_FD);
    close(INFO_FD);
    close(SUPERVISOR_FD);
    prelude[count] = NULL;
    execvp(prelude[0], prelude);
    fprintf(stderr, "init: cannot run %s: %s\n", prelude[0], strerror(errno));
    _exit(127);
  }
  close(PRELUDE_FD);
  int status = reap_until(child);
  if (status != 0) fprintf(stderr, "init: the prelude failed (status %d)\n", status);
  char go;
  while (read(BLOCK_FD, &go, 1) < 0 && errno == EINTR) continue;
  close(BLOCK_FD);
  command[-1] = "--continue";
  command[-2] = self;
  execv(self, command - 2);
  fprintf(stderr, "init: cannot continue as %s: %s\n", self, strerror(errno));
  return 125;
}

int main(int argc, char **argv) {
  if (argc < 2) {
    fprintf(stderr, "usage: init COMMAND [ARG...]\n");
    return 2;
  }
  if (strcmp(argv[1], "--exec") == 0 && argc > 2) {
    start_supervision();
    execvp(argv[2], argv + 2);
    fprintf(stderr, "init: cannot run %s: %s\n", argv[2], strerror(errno));
    return 127;
  }
  bool continued = strcmp(argv[1], "--continue") == 0 && argc > 2;
  if (continued) {
    /* The prelude's init gave up every capability already: nothing is left to drop. */
    argv++;
  } else {
    prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0);
    if (drop_every_capability() != 0) return 125;
  }
  if (!continued && strcmp(argv[1], "--prelude") == 0 && argc > 3) {
    int count = atoi(argv[2]);
    /* At least one word of prelude and one of command; the command needs two slots before it (see run_prelude). */
    if (count < 1 || count > argc - 4) {
      fprintf(stderr, "usage: init --prelude N P1..PN COMMAND [ARG...]\n");
      return 2;
    }
    return run_prelude(argv[0], count, argv + 3, argv + 3 + count);
  }
  pid_t first = fork();
  if (first < 0) {
    perror("init: fork");
    return 125;
  }
  if (first == 0) {
    start_supervision();
    execvp(argv[1], argv + 1);
    fprintf(stderr, "init: cannot run %s: %s\n", argv[1], strerror(errno));
    _exit(127);
  }
  close(SUPERVISOR_FD);
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
