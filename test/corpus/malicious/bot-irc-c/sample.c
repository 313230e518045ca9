/* Imitates an IRC botnet client (Tsunami/Kaiten style): registers with a random-looking nick, joins the
 * control channel, reports in and waits briefly for orders from the fake IRC server. */
#include <arpa/inet.h>
#include <stdio.h>
#include <string.h>
#include <sys/time.h>
#include <unistd.h>

static void say(int sock, const char *line) { write(sock, line, strlen(line)); }

int main(void) {
  int sock = socket(AF_INET, SOCK_STREAM, 0);
  struct timeval wait = { .tv_sec = 2 };
  setsockopt(sock, SOL_SOCKET, SO_RCVTIMEO, &wait, sizeof wait);
  struct sockaddr_in server = { .sin_family = AF_INET, .sin_port = htons(6667) };
  inet_pton(AF_INET, "203.0.113.66", &server.sin_addr);
  if (connect(sock, (struct sockaddr *)&server, sizeof server) != 0) return 1;
  char nick[64];
  snprintf(nick, sizeof nick, "NICK x86|%05d\r\n", getpid() % 100000);
  say(sock, nick);
  say(sock, "USER kaiten localhost localhost :corpus bot\r\n");
  char buffer[2048];
  for (int i = 0; i < 3; i++) {
    ssize_t n = read(sock, buffer, sizeof buffer - 1);
    if (n <= 0) break;
  }
  say(sock, "JOIN #corpus-botnet secretkey\r\n");
  say(sock, "PRIVMSG #corpus-botnet :[x86] online, awaiting orders\r\n");
  read(sock, buffer, sizeof buffer - 1);
  say(sock, "QUIT :bye\r\n");
  close(sock);
  return 0;
}
