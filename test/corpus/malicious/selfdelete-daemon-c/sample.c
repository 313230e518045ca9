/* Imitates a backdoor that covers its tracks: it daemonizes with the double fork and setsid, deletes its
 * own executable, and leaves a hidden marker while it "runs" for a moment. */
#include <fcntl.h>
#include <stdio.h>
#include <sys/stat.h>
#include <unistd.h>

int main(void) {
  char self[512];
  ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
  if (n <= 0) return 1;
  self[n] = '\0';
  if (fork() != 0) return 0;
  setsid();
  if (fork() != 0) return 0;
  chdir("/");
  unlink(self);
  int fd = open("/var/tmp/.sysd.lock", O_WRONLY | O_CREAT | O_TRUNC, 0600);
  dprintf(fd, "%d\n", getpid());
  close(fd);
  sleep(2);
  return 0;
}
