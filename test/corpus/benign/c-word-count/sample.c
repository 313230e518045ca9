/* Benign control: a small C utility. Writes a text file of its own, counts its lines and words, and
 * writes the counts next to it. */
#include <ctype.h>
#include <stdio.h>

int main(void) {
  FILE *text = fopen("/tmp/wc-input.txt", "w");
  if (!text) return 1;
  for (int i = 0; i < 50; i++) fprintf(text, "line %d of some ordinary text\n", i);
  fclose(text);
  text = fopen("/tmp/wc-input.txt", "r");
  int c, lines = 0, words = 0, in_word = 0;
  while ((c = fgetc(text)) != EOF) {
    if (c == '\n') lines++;
    if (isspace(c)) in_word = 0;
    else if (!in_word) { in_word = 1; words++; }
  }
  fclose(text);
  FILE *out = fopen("/tmp/wc-output.txt", "w");
  fprintf(out, "%d lines, %d words\n", lines, words);
  fclose(out);
  printf("%d %d\n", lines, words);
  return 0;
}
