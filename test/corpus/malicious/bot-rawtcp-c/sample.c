/* Imitates a bot with a protocol of its own over raw TCP: every 2 seconds it connects to its controller,
 * sends a binary-framed check-in and reads the (empty) answer. */
#include <arpa/inet.h>
#include <stdint.h>
#include <string.h>
#include <sys/time.h>
#include <unistd.h>

int main(void) {
  for (uint32_t seq = 0; seq < 6; seq++) {
    int sock = socket(AF_INET, SOCK_STREAM, 0);
    struct timeval wait = { .tv_usec = 300000 };
    setsockopt(sock, SOL_SOCKET, SO_RCVTIMEO, &wait, sizeof wait);
    struct sockaddr_in c2 = { .sin_family = AF_INET, .sin_port = htons(1337) };
    inet_pton(AF_INET, "198.51.100.20", &c2.sin_addr);
    if (connect(sock, (struct sockaddr *)&c2, sizeof c2) == 0) {
      unsigned char frame[24] = { 0xb0, 0x75, 0x01, 0x00 };
      memcpy(frame + 4, &seq, sizeof seq);
      memcpy(frame + 8, "corpus-bot-07\0\0\0", 16);
      write(sock, frame, sizeof frame);
      unsigned char reply[64];
      read(sock, reply, sizeof reply);
    }
    close(sock);
    sleep(2);
  }
  return 0;
}
