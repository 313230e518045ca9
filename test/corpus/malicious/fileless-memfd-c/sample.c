/* Imitates a fileless loader: it copies a program into an anonymous memory file (memfd) under an
 * innocuous name and executes it from there, so the payload never exists on disk. The "payload" is
 * /bin/true, which only exits. */
#define _GNU_SOURCE
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

int main(void) {
  int memfd = memfd_create("kdmtmpflush", 0);
  int in = open("/bin/true", O_RDONLY);
  if (memfd < 0 || in < 0) return 1;
  char buffer[65536];
  ssize_t n;
  while ((n = read(in, buffer, sizeof buffer)) > 0) write(memfd, buffer, (size_t)n);
  close(in);
  pid_t child = fork();
  if (child == 0) {
    char *const argv[] = { "[kdmtmpflush]", 0 };
    char *const envp[] = { 0 };
    fexecve(memfd, argv, envp);
    _exit(127);
  }
  waitpid(child, 0, 0);
  return 0;
}
