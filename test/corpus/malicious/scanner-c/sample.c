/* Imitates a port scanner: non-blocking connects to forty ports of one host of the fake internet, each
 * given 200 ms to answer, and a list of the open ones. */
#include <arpa/inet.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <unistd.h>

int main(void) {
  int open_ports = 0;
  for (int port = 20; port < 60; port++) {
    int sock = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK, 0);
    struct sockaddr_in target = { .sin_family = AF_INET, .sin_port = htons((unsigned short)port) };
    inet_pton(AF_INET, "203.0.113.9", &target.sin_addr);
    connect(sock, (struct sockaddr *)&target, sizeof target);
    struct pollfd wait = { .fd = sock, .events = POLLOUT };
    if (poll(&wait, 1, 200) == 1) open_ports++;
    close(sock);
  }
  printf("%d open ports\n", open_ports);
  return 0;
}
