/* Benign control: CPU work and a child process. Sieves primes, writes them to a file, and has a child
 * run /bin/ls on the result, as build and test jobs do. */
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

int main(void) {
  static char composite[200000];
  FILE *out = fopen("/tmp/primes.txt", "w");
  if (!out) return 1;
  int count = 0;
  for (int n = 2; n < (int)sizeof composite; n++) {
    if (composite[n]) continue;
    count++;
    fprintf(out, "%d\n", n);
    for (long m = (long)n * n; m < (long)sizeof composite; m += n) composite[m] = 1;
  }
  fclose(out);
  pid_t child = fork();
  if (child == 0) {
    execl("/bin/ls", "ls", "-l", "/tmp/primes.txt", (char *)0);
    _exit(127);
  }
  waitpid(child, 0, 0);
  printf("%d primes\n", count);
  return 0;
}
