/* Imitates an old 32-bit (i386) IoT bot built against a small libc: no libc here, every call made with
 * `int 0x80` and the socket calls through the socketcall multiplexer, as such bots make them. Every 2
 * seconds it connects to its controller's telnet-like port, sends a binary-framed check-in naming its
 * architecture, and reads the answer. Built with -m32 -nostdlib -static (scripts/build-corpus.sh). */
#define NR_EXIT_GROUP 252
#define NR_READ 3
#define NR_WRITE 4
#define NR_CLOSE 6
#define NR_SOCKETCALL 102
#define NR_NANOSLEEP 162
#define SYS_SOCKET 1
#define SYS_CONNECT 3
#define SYS_SETSOCKOPT 14
#define AF_INET 2
#define SOCK_STREAM 1
#define SOL_SOCKET 1
#define SO_RCVTIMEO 20

static long call3(long nr, long a, long b, long c) {
  long result;
  __asm__ volatile("int $0x80" : "=a"(result) : "a"(nr), "b"(a), "c"(b), "d"(c) : "memory");
  return result;
}

static long socketcall(long call, unsigned long *args) {
  return call3(NR_SOCKETCALL, call, (long)args, 0);
}

struct sockaddr_in32 {
  unsigned short family;
  unsigned short port;
  unsigned char addr[4];
  char zero[8];
};

void bot_main(void) {
  /* 198.51.100.23:2323, the controller. */
  struct sockaddr_in32 c2 = {AF_INET, (2323 >> 8) | ((2323 & 0xff) << 8), {198, 51, 100, 23}, {0}};
  for (unsigned int seq = 0; seq < 6; seq++) {
    unsigned long socket_args[3] = {AF_INET, SOCK_STREAM, 0};
    long sock = socketcall(SYS_SOCKET, socket_args);
    long wait[2] = {0, 300000};
    unsigned long option_args[5] = {(unsigned long)sock, SOL_SOCKET, SO_RCVTIMEO, (unsigned long)wait, sizeof(wait)};
    socketcall(SYS_SETSOCKOPT, option_args);
    unsigned long connect_args[3] = {(unsigned long)sock, (unsigned long)&c2, sizeof(c2)};
    if (socketcall(SYS_CONNECT, connect_args) == 0) {
      unsigned char frame[24] = {0x4d, 0x31, 0x01, 0x00, (unsigned char)seq, 0, 0, 0, 'i', '3', '8', '6', '-', 'b', 'o', 't'};
      call3(NR_WRITE, sock, (long)frame, sizeof(frame));
      unsigned char reply[64];
      call3(NR_READ, sock, (long)reply, sizeof(reply));
    }
    call3(NR_CLOSE, sock, 0, 0);
    long pause[2] = {2, 0};
    call3(NR_NANOSLEEP, (long)pause, 0, 0);
  }
  call3(NR_EXIT_GROUP, 0, 0, 0);
}

__asm__(".globl _start\n_start:\n\tcall bot_main\n\thlt\n");
