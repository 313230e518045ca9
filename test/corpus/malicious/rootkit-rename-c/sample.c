/* Imitates a bot that hides among kernel threads: it renames itself to a kworker, then starts its worker
 * again with argv[0] "[kworker/0:2H]", which renames itself too and leaves a hidden pid file. */
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

int main(int argc, char **argv) {
  if (argc > 1 && strcmp(argv[1], "--worker") == 0) {
    prctl(PR_SET_NAME, "kworker/0:2H");
    int fd = open("/tmp/.kworker.pid", O_WRONLY | O_CREAT | O_TRUNC, 0600);
    dprintf(fd, "%d\n", getpid());
    close(fd);
    sleep(1);
    return 0;
  }
  prctl(PR_SET_NAME, "kthreadd");
  char self[512];
  ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
  if (n <= 0) return 1;
  self[n] = '\0';
  pid_t child = fork();
  if (child == 0) {
    execl(self, "[kworker/0:2H]", "--worker", (char *)0);
    _exit(127);
  }
  waitpid(child, 0, 0);
  return 0;
}
