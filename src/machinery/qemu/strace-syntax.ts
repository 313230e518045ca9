/**
 * The value syntax of strace's output with `-x -X raw`: numbers (decimal, 0x hex, 0-prefixed octal,
 * flag sets joined by `|`), C strings with escapes (possibly followed by `...` when truncated), arrays
 * `[...]`, structures `{name=value, ...}` and the odd call-like form `htons(80)`.
 */

/** Splits an argument list (without its parentheses) at its top-level commas. */
export function splitTopLevel(text: string): string[] {
  const parts: string[] = [];
  let depth = 0;
  let start = 0;
  for (let i = 0; i < text.length; i++) {
    const char = text[i];
    if (char === '"') {
      i = endOfString(text, i);
    } else if (char === '(' || char === '[' || char === '{') {
      depth++;
    } else if (char === ')' || char === ']' || char === '}') {
      depth--;
    } else if (char === ',' && depth === 0) {
      parts.push(text.slice(start, i).trim());
      start = i + 1;
    }
  }
  const last = text.slice(start).trim();
  if (last || parts.length > 0) parts.push(last);
  return parts;
}

/** Index of the closing quote of the string opening at `open`. */
export function endOfString(text: string, open: number): number {
  for (let i = open + 1; i < text.length; i++) {
    if (text[i] === '\\') i++;
    else if (text[i] === '"') return i;
  }
  return text.length - 1;
}

/**
 * Index of the parenthesis closing the one at `open`, skipping strings and nested brackets; -1 when
 * the text ends first.
 */
export function closingParenthesis(text: string, open: number): number {
  let depth = 0;
  for (let i = open; i < text.length; i++) {
    const char = text[i];
    if (char === '"') i = endOfString(text, i);
    else if (char === '(' || char === '[' || char === '{') depth++;
    else if (char === ')' || char === ']' || char === '}') {
      depth--;
      if (depth === 0) return i;
    }
  }
  return -1;
}

/** An integer argument: `-100`, `0x80000`, `0644`, `0x1|0x80000`, `NULL`. NaN when not a number. */
export function integer(text: string | undefined): number {
  if (text === undefined) return Number.NaN;
  const value = text.trim();
  if (value === 'NULL') return 0;
  if (value.includes('|')) return value.split('|').reduce((sum, part) => sum | integer(part), 0);
  if (/^-?0x[0-9a-f]+$/i.test(value)) return Number.parseInt(value, 16);
  if (/^0[0-7]+$/.test(value)) return Number.parseInt(value, 8);
  if (/^-?\d+$/.test(value)) return Number(value);
  return Number.NaN;
}

/** A pointer or address argument as an exact bigint (user-space addresses can pass 2^53). */
export function address(text: string | undefined): bigint {
  const value = (text ?? '').trim();
  if (/^0x[0-9a-f]+$/i.test(value)) return BigInt(value);
  if (/^\d+$/.test(value)) return BigInt(value);
  return 0n;
}

/** The bytes of a C string argument, or null when the argument is not a string (e.g. a bare pointer). */
export function stringBytes(text: string | undefined): Buffer | null {
  const value = (text ?? '').trim();
  if (!value.startsWith('"')) return null;
  const end = endOfString(value, 0);
  const bytes: number[] = [];
  for (let i = 1; i < end; i++) {
    const char = value.charCodeAt(i);
    if (value[i] !== '\\') {
      // Printable ASCII comes as is; strace escapes everything else.
      bytes.push(char & 0xff);
      continue;
    }
    const next = value[++i]!;
    const simple = ESCAPES[next];
    if (simple !== undefined) {
      bytes.push(simple);
    } else if (next === 'x') {
      bytes.push(Number.parseInt(value.slice(i + 1, i + 3), 16));
      i += 2;
    } else if (/[0-7]/.test(next)) {
      const octal = /^[0-7]{1,3}/.exec(value.slice(i))![0];
      bytes.push(Number.parseInt(octal, 8) & 0xff);
      i += octal.length - 1;
    } else {
      bytes.push(next.charCodeAt(0) & 0xff);
    }
  }
  return Buffer.from(bytes);
}

const ESCAPES: Record<string, number> = { n: 10, t: 9, r: 13, v: 11, f: 12, '"': 34, '\\': 92, "'": 39, a: 7, b: 8, e: 27 };

/** A string argument as text (UTF-8, as the guest's programs saw it); '' when it is not a string. */
export function text(value: string | undefined): string {
  return stringBytes(value)?.toString('utf8') ?? '';
}

/** `["a", "b"...]`: the strings of an array argument (a trailing `...` means strace cut the list). */
export function stringArray(value: string | undefined): string[] {
  const inner = (value ?? '').trim();
  if (!inner.startsWith('[')) return [];
  return splitTopLevel(inner.slice(1, inner.lastIndexOf(']')))
    .filter((item) => item.startsWith('"'))
    .map((item) => text(item));
}

/** `[3, 4]`: the numbers of an array argument. */
export function numberArray(value: string | undefined): number[] {
  const inner = (value ?? '').trim();
  if (!inner.startsWith('[')) return [];
  return splitTopLevel(inner.slice(1, inner.lastIndexOf(']'))).map(integer);
}

/** `{sa_family=0x2, sin_port="\x00\x50", ...}`: the fields of a structure argument. */
export function structFields(value: string | undefined): Map<string, string> {
  const fields = new Map<string, string>();
  const inner = (value ?? '').trim();
  if (!inner.startsWith('{')) return fields;
  const close = closingParenthesis(inner, 0);
  for (const part of splitTopLevel(inner.slice(1, close < 0 ? undefined : close))) {
    const equals = part.indexOf('=');
    if (equals > 0) fields.set(part.slice(0, equals).trim(), part.slice(equals + 1).trim());
  }
  return fields;
}
