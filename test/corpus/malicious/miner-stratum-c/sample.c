/* Imitates a cryptominer's pool login: stratum JSON-RPC (subscribe, authorize) over raw TCP to a pool port
 * of the fake internet, then a few fake share submissions. No hashing is done. */
#include <arpa/inet.h>
#include <stdio.h>
#include <string.h>
#include <sys/time.h>
#include <unistd.h>

static void send_line(int sock, const char *line) { write(sock, line, strlen(line)); }

int main(void) {
  int sock = socket(AF_INET, SOCK_STREAM, 0);
  struct timeval wait = { .tv_sec = 2 };
  setsockopt(sock, SOL_SOCKET, SO_RCVTIMEO, &wait, sizeof wait);
  struct sockaddr_in pool = { .sin_family = AF_INET, .sin_port = htons(3333) };
  inet_pton(AF_INET, "198.51.100.77", &pool.sin_addr);
  if (connect(sock, (struct sockaddr *)&pool, sizeof pool) != 0) return 1;
  send_line(sock, "{\"id\":1,\"method\":\"mining.subscribe\",\"params\":[\"corpusminer/1.0\"]}\n");
  send_line(sock, "{\"id\":2,\"method\":\"mining.authorize\",\"params\":[\"4CorpusWalletAddressxxxxxxxxxxxxxxxx.worker1\",\"x\"]}\n");
  char reply[512];
  read(sock, reply, sizeof reply);
  for (int share = 0; share < 3; share++) {
    char line[256];
    snprintf(line, sizeof line, "{\"id\":%d,\"method\":\"mining.submit\",\"params\":[\"worker1\",\"job%d\",\"00000000\",\"5f5e1000\",\"deadbeef\"]}\n", 10 + share, share);
    send_line(sock, line);
    usleep(200000);
  }
  close(sock);
  return 0;
}
