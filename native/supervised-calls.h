/*
 * The sample's system calls that its seccomp filter (native/init.c) turns into notifications for the
 * supervisor (native/supervisor.c), for both ABIs an x86_64 process can call with: its own, and i386 (a
 * 32-bit program, or `int 0x80` from a 64-bit one), whose calls have other numbers and, for the calls older
 * than their _time64 twins, time structs with 32-bit fields. The supervisor handles a call of either ABI
 * under its x86_64 number.
 *
 * x32 calls (x86_64 numbers with X32_SYSCALL_BIT) need no entry: the sandbox's own filter refuses them
 * (src/machinery/linux/seccomp.ts), and an error action takes precedence over a notification.
 */
#ifndef NESTBOX_SUPERVISED_CALLS_H
#define NESTBOX_SUPERVISED_CALLS_H

#include <linux/audit.h>

/* The supervisor's one-byte order: which calls besides sleeps it watches. */
#define SUPERVISE_EXITS 1
#define SUPERVISE_FILES 2
#define SUPERVISE_TIMERS 4

struct supervised_call {
  unsigned arch;
  unsigned short nr;
  /* The x86_64 number of the same call. */
  unsigned short as;
  /* 0: always watched; else the order bit that asks for it. */
  unsigned char order;
  /* Its timespec/timeval fields are 32-bit. */
  unsigned char time32;
  /*
   * A wait's timeout argument (its index + 1; 0: none): in milliseconds, or a pointer. The filter lets
   * through without a notification a wait that cannot be long: under WAIT_FLOOR_MS, infinite (negative),
   * or with no timeout struct. Event loops wait often; they need not pay a round trip each time.
   */
  unsigned char timeout_ms;
  unsigned char timeout_pointer;
};

#define WAIT_FLOOR_MS 1000

#define NATIVE_CALL(nr, order) {AUDIT_ARCH_X86_64, nr, nr, order, 0, 0, 0}
#define I386_CALL(nr, as, order, time32) {AUDIT_ARCH_I386, nr, as, order, time32, 0, 0}
#define NATIVE_WAIT(nr, ms, pointer) {AUDIT_ARCH_X86_64, nr, nr, SUPERVISE_TIMERS, 0, ms, pointer}
#define I386_WAIT(nr, as, time32, ms, pointer) {AUDIT_ARCH_I386, nr, as, SUPERVISE_TIMERS, time32, ms, pointer}

static const struct supervised_call SUPERVISED_CALLS[] = {
    /* Sleeps: nanosleep, clock_nanosleep (i386: also clock_nanosleep_time64). */
    NATIVE_CALL(35, 0), NATIVE_CALL(230, 0),
    I386_CALL(162, 35, 0, 1), I386_CALL(267, 230, 0, 1), I386_CALL(407, 230, 0, 0),
    /* Timers: alarm, setitimer, timer_settime, timerfd_settime (i386: and their _time64 twins). */
    NATIVE_CALL(37, SUPERVISE_TIMERS), NATIVE_CALL(38, SUPERVISE_TIMERS), NATIVE_CALL(223, SUPERVISE_TIMERS),
    NATIVE_CALL(286, SUPERVISE_TIMERS),
    I386_CALL(27, 37, SUPERVISE_TIMERS, 0), I386_CALL(104, 38, SUPERVISE_TIMERS, 1), I386_CALL(260, 223, SUPERVISE_TIMERS, 1),
    I386_CALL(409, 223, SUPERVISE_TIMERS, 0), I386_CALL(325, 286, SUPERVISE_TIMERS, 1), I386_CALL(411, 286, SUPERVISE_TIMERS, 0),
    /* Waits: select, pselect6, poll, ppoll, epoll_wait, epoll_pwait, epoll_pwait2 (i386: _newselect, _time64 twins). */
    NATIVE_WAIT(23, 0, 5), NATIVE_WAIT(270, 0, 5), NATIVE_WAIT(7, 3, 0), NATIVE_WAIT(271, 0, 3), NATIVE_WAIT(232, 4, 0),
    NATIVE_WAIT(281, 4, 0), NATIVE_WAIT(441, 0, 4),
    I386_WAIT(142, 23, 1, 0, 5), I386_WAIT(308, 270, 1, 0, 5), I386_WAIT(413, 270, 0, 0, 5), I386_WAIT(168, 7, 0, 3, 0),
    I386_WAIT(309, 271, 1, 0, 3), I386_WAIT(414, 271, 0, 0, 3), I386_WAIT(256, 232, 0, 4, 0), I386_WAIT(319, 281, 0, 4, 0),
    I386_WAIT(441, 441, 0, 0, 4),
    /* Files: execve, execveat, unlink, unlinkat. */
    NATIVE_CALL(59, SUPERVISE_FILES), NATIVE_CALL(322, SUPERVISE_FILES), NATIVE_CALL(87, SUPERVISE_FILES),
    NATIVE_CALL(263, SUPERVISE_FILES),
    I386_CALL(11, 59, SUPERVISE_FILES, 0), I386_CALL(358, 322, SUPERVISE_FILES, 0), I386_CALL(10, 87, SUPERVISE_FILES, 0),
    I386_CALL(301, 263, SUPERVISE_FILES, 0),
    /* Process exits: exit_group. */
    NATIVE_CALL(231, SUPERVISE_EXITS), I386_CALL(252, 231, SUPERVISE_EXITS, 0),
};

#define SUPERVISED_CALL_COUNT (sizeof SUPERVISED_CALLS / sizeof SUPERVISED_CALLS[0])

#endif
