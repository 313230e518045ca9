/* Imitates a bot installing itself to start at boot: a copy of itself under /usr/local/sbin, a line in
 * /etc/rc.local and an init script of its own in /etc/init.d. Every file it writes is one it creates. */
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static void write_file(const char *path, const char *text, int mode) {
  int fd = open(path, O_WRONLY | O_CREAT | O_APPEND, mode);
  if (fd < 0) return;
  write(fd, text, strlen(text));
  close(fd);
}

static void copy_self(const char *to) {
  char buffer[8192];
  int in = open("/proc/self/exe", O_RDONLY), out = open(to, O_WRONLY | O_CREAT | O_TRUNC, 0755);
  ssize_t n;
  while (in >= 0 && out >= 0 && (n = read(in, buffer, sizeof buffer)) > 0) write(out, buffer, (size_t)n);
  close(in);
  close(out);
}

int main(void) {
  mkdir("/usr/local/sbin", 0755);
  copy_self("/usr/local/sbin/corpus-netd");
  write_file("/etc/rc.local", "#!/bin/sh\n/usr/local/sbin/corpus-netd &\nexit 0\n", 0755);
  write_file("/etc/init.d/corpus-netd",
             "#!/bin/sh\n### BEGIN INIT INFO\n# Provides: corpus-netd\n# Default-Start: 2 3 4 5\n### END INIT INFO\n"
             "/usr/local/sbin/corpus-netd &\n",
             0755);
  symlink("/etc/init.d/corpus-netd", "/etc/rc2.d/S99corpus-netd");
  puts("installed");
  return 0;
}
