/*
 * Imitates a Linux implant's static traits: it checks for a debugger with ptrace(PTRACE_TRACEME) and
 * /proc/self/status, carries code to inject into another process with ptrace (attach, poke, set registers),
 * connects to a hard-coded address and keeps its configuration encrypted with ChaCha20. Harmless: nothing
 * past the argument check runs unless the program is given 9 or more arguments, which nobody does; even then
 * the only process it attaches to is its own parent's pid 0 (which fails), and the address is a documentation
 * address (198.51.100.0/24) that leads nowhere.
 */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdio.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/socket.h>
#include <sys/types.h>
#include <sys/user.h>
#include <unistd.h>

static const char sigma[] = "expand 32-byte k";
static const char c2_address[] = "198.51.100.23";

static int traced(void) {
  if (ptrace(PTRACE_TRACEME, 0, 0, 0) == -1) return 1;
  char line[256];
  FILE *status = fopen("/proc/self/status", "r");
  int found = 0;
  while (status && fgets(line, sizeof line, status)) {
    if (strncmp(line, "TracerPid:", 10) == 0 && strcmp(line + 10, "\t0\n") != 0) found = 1;
  }
  if (status) fclose(status);
  return found;
}

static void inject(pid_t pid) {
  struct user_regs_struct regs;
  if (ptrace(PTRACE_ATTACH, pid, 0, 0) == -1) return;
  ptrace(PTRACE_GETREGS, pid, 0, &regs);
  ptrace(PTRACE_POKETEXT, pid, (void *)regs.rip, (void *)0xccccccccccccccccUL);
  ptrace(PTRACE_SETREGS, pid, 0, &regs);
  ptrace(PTRACE_DETACH, pid, 0, 0);
}

static void call_home(void) {
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  struct sockaddr_in address = {.sin_family = AF_INET, .sin_port = htons(4444)};
  inet_pton(AF_INET, c2_address, &address.sin_addr);
  if (connect(fd, (struct sockaddr *)&address, sizeof address) == 0) write(fd, sigma, 4);
  close(fd);
}

int main(int argc, char **argv) {
  (void)argv;
  if (argc < 9) return 0;
  if (traced()) return 1;
  inject(0);
  call_home();
  return 0;
}
