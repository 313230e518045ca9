/* A Windows program that only prints: the PE control of the static capability rules. */
#include <stdio.h>

int main(void) {
  puts("hello from an ordinary program");
  return 0;
}
