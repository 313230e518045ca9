/**
 * Splits the `arguments` option into argv words as a POSIX shell would for plain words: whitespace
 * separates, single and double quotes group, a backslash escapes the next character (outside single
 * quotes). No expansion of any kind happens.
 */
export function splitArguments(text: string | undefined): string[] {
  if (!text) return [];
  const words: string[] = [];
  let word = '';
  let inWord = false;
  let quote: '"' | "'" | null = null;
  for (let index = 0; index < text.length; index++) {
    const char = text[index]!;
    if (quote === "'") {
      if (char === "'") quote = null;
      else word += char;
    } else if (char === '\\' && index + 1 < text.length) {
      word += text[++index];
      inWord = true;
    } else if (quote === '"') {
      if (char === '"') quote = null;
      else word += char;
    } else if (char === '"' || char === "'") {
      quote = char;
      inWord = true;
    } else if (/\s/.test(char)) {
      if (inWord) words.push(word);
      word = '';
      inWord = false;
    } else {
      word += char;
      inWord = true;
    }
  }
  if (inWord) words.push(word);
  return words;
}
