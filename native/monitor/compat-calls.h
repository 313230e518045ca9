/*
 * The 32-bit (i386) system calls the monitor decodes, each as the 64-bit call it does the same as:
 * COMPAT_CALL(i386 name, i386 number, x86-64 number). A record of one carries the 64-bit number, so
 * the loader and the service read it as they read that call. The arguments are the same but for their
 * width (monitor.bpf.c reads them from the i386 registers and reads the pointers inside structures as
 * 32-bit). The 16-bit uid calls, the old `mmap` and `select` (arguments in a structure) and the sleeps
 * with 32-bit timespecs are left out: they are only counted. socketcall is decoded apart (its
 * sub-calls are the socket calls below). test/unit/monitor-compat-calls.test.ts checks the numbers
 * against the kernel headers.
 */
#ifndef NESTBOX_COMPAT_CALLS_H
#define NESTBOX_COMPAT_CALLS_H

#define NR32_socketcall 102

#define COMPAT_CALLS(X)                                                                          \
  X(read, 3, 0) X(write, 4, 1) X(open, 5, 2) X(close, 6, 3) X(creat, 8, 85) X(link, 9, 86)       \
  X(unlink, 10, 87) X(execve, 11, 59) X(chdir, 12, 80) X(chmod, 15, 90) X(mount, 21, 165)        \
  X(ptrace, 26, 101) X(alarm, 27, 37) X(kill, 37, 62) X(rename, 38, 82) X(mkdir, 39, 83)         \
  X(rmdir, 40, 84) X(dup, 41, 32) X(pipe, 42, 22) X(umount2, 52, 166) X(fcntl, 55, 72)           \
  X(setpgid, 57, 109) X(dup2, 63, 33) X(setsid, 66, 112) X(symlink, 83, 88) X(truncate, 92, 76)  \
  X(ftruncate, 93, 77) X(fchmod, 94, 91) X(mprotect, 125, 10) X(init_module, 128, 175)           \
  X(delete_module, 129, 176) X(fchdir, 133, 81) X(readv, 145, 19) X(writev, 146, 20)             \
  X(prctl, 172, 157) X(pwrite64, 181, 18) X(capset, 185, 126) X(mmap2, 192, 9)                   \
  X(lchown32, 198, 94) X(setreuid32, 203, 113) X(setregid32, 204, 114) X(fchown32, 207, 93)      \
  X(setresuid32, 208, 117) X(setresgid32, 210, 119) X(chown32, 212, 92) X(setuid32, 213, 105)    \
  X(setgid32, 214, 106) X(setfsuid32, 215, 122) X(setfsgid32, 216, 123) X(getdents64, 220, 217)  \
  X(fcntl64, 221, 72) X(exit_group, 252, 231) X(exit, 1, 60) X(tkill, 238, 200)                 \
  X(tgkill, 270, 234) X(openat, 295, 257) X(mkdirat, 296, 258) X(fchownat, 298, 260)             \
  X(unlinkat, 301, 263) X(renameat, 302, 264) X(linkat, 303, 265) X(symlinkat, 304, 266)         \
  X(fchmodat, 306, 268) X(dup3, 330, 292) X(pipe2, 331, 293) X(pwritev, 334, 296)                \
  X(finit_module, 350, 313) X(renameat2, 353, 316) X(memfd_create, 356, 319)                     \
  X(execveat, 358, 322) X(socket, 359, 41) X(socketpair, 360, 53) X(bind, 361, 49)               \
  X(connect, 362, 42) X(listen, 363, 50) X(accept4, 364, 288) X(sendto, 369, 44)                 \
  X(sendmsg, 370, 46) X(recvfrom, 371, 45) X(recvmsg, 372, 47) X(pwritev2, 379, 328)             \
  X(openat2, 437, 437) X(fchmodat2, 452, 452)

/*
 * socketcall's sub-calls (its first argument), as the 64-bit calls they are, with how many arguments
 * each reads from socketcall's array: X(name, sub-call, x86-64 number, arguments). send and recv are
 * sendto and recvfrom without an address.
 */
#define SOCKETCALLS(X)                                                                           \
  X(SYS_SOCKET, 1, 41, 3) X(SYS_BIND, 2, 49, 3) X(SYS_CONNECT, 3, 42, 3) X(SYS_LISTEN, 4, 50, 2) \
  X(SYS_ACCEPT, 5, 43, 3) X(SYS_SOCKETPAIR, 8, 53, 4) X(SYS_SEND, 9, 44, 4)                      \
  X(SYS_RECV, 10, 45, 4) X(SYS_SENDTO, 11, 44, 6) X(SYS_RECVFROM, 12, 45, 6)                     \
  X(SYS_SENDMSG, 16, 46, 3) X(SYS_RECVMSG, 17, 47, 3) X(SYS_ACCEPT4, 18, 288, 4)

#endif
