import { openRegularFile } from '../util/safe-open.js';

/**
 * Printable strings in binary data, found in one streaming pass: runs of printable ASCII (tab and
 * 0x20-0x7e, the set GNU `strings` uses) and the same characters as UTF-16LE (each followed by a zero
 * byte, at either byte alignment). Memory stays bounded however large the input: very long runs are
 * handed over in segments of `maxSegment` characters.
 */

export interface FoundString {
  text: string;
  /** Byte offset of the segment's first character in the input. */
  offset: number;
  wide: boolean;
  /** True for the second and later segments of one long run. */
  continued: boolean;
}

export type StringSink = (found: FoundString) => void;

const isPrintable = (byte: number) => byte === 9 || (byte >= 0x20 && byte <= 0x7e);

class WideRun {
  codes: number[] = [];
  start = 0;
  continued = false;
}

export class StringScanner {
  private position = 0;
  private asciiParts: string[] = [];
  private asciiLength = 0;
  private asciiStart = 0;
  private asciiContinued = false;
  private previous = -1;
  private readonly wide = [new WideRun(), new WideRun()];

  constructor(
    private readonly sink: StringSink,
    private readonly minLength = 6,
    private readonly maxSegment = 65536,
  ) {}

  push(chunk: Uint8Array): void {
    let runStart = this.asciiLength > 0 ? 0 : -1;
    for (let i = 0; i < chunk.length; i++) {
      const byte = chunk[i]!;
      if (isPrintable(byte)) {
        if (runStart < 0) {
          runStart = i;
          this.asciiStart = this.position + i;
        }
        if (this.asciiLength + (i - runStart + 1) >= this.maxSegment) {
          this.asciiParts.push(Buffer.from(chunk.buffer, chunk.byteOffset + runStart, i - runStart + 1).toString('latin1'));
          this.asciiLength += i - runStart + 1;
          this.flushAscii(true);
          runStart = i + 1 < chunk.length && isPrintable(chunk[i + 1]!) ? i + 1 : -1;
          this.asciiStart = this.position + i + 1;
        }
      } else if (runStart >= 0) {
        this.asciiParts.push(Buffer.from(chunk.buffer, chunk.byteOffset + runStart, i - runStart).toString('latin1'));
        this.asciiLength += i - runStart;
        this.flushAscii(false);
        runStart = -1;
      } else {
        this.asciiContinued = false;
      }
      if (this.previous >= 0) this.widePair(this.previous, byte, this.position + i - 1);
      this.previous = byte;
    }
    if (runStart >= 0) {
      this.asciiParts.push(Buffer.from(chunk.buffer, chunk.byteOffset + runStart, chunk.length - runStart).toString('latin1'));
      this.asciiLength += chunk.length - runStart;
    }
    this.position += chunk.length;
  }

  end(): void {
    this.flushAscii(false);
    for (const run of this.wide) this.flushWide(run, false);
  }

  private widePair(low: number, high: number, offset: number): void {
    const run = this.wide[offset & 1]!;
    if (high === 0 && isPrintable(low)) {
      if (run.codes.length === 0) run.start = offset;
      run.codes.push(low);
      if (run.codes.length >= this.maxSegment) this.flushWide(run, true);
    } else if (run.codes.length > 0 || run.continued) {
      this.flushWide(run, false);
    }
  }

  private flushAscii(more: boolean): void {
    const text = this.asciiParts.join('');
    if (text.length >= this.minLength || (this.asciiContinued && text.length > 0)) {
      this.sink({ text, offset: this.asciiStart, wide: false, continued: this.asciiContinued });
    }
    this.asciiParts = [];
    this.asciiLength = 0;
    this.asciiContinued = more;
  }

  private flushWide(run: WideRun, more: boolean): void {
    if (run.codes.length >= this.minLength || (run.continued && run.codes.length > 0)) {
      this.sink({ text: Buffer.from(run.codes).toString('latin1'), offset: run.start, wide: true, continued: run.continued });
    }
    run.codes = [];
    run.continued = more;
  }
}

/** Feeds a file through `scanner` in chunks, reading at most `limit` bytes. */
export async function scanFile(path: string, scanner: StringScanner, limit = Number.POSITIVE_INFINITY): Promise<void> {
  const handle = await openRegularFile(path);
  try {
    const buffer = Buffer.alloc(1 << 20);
    let total = 0;
    while (total < limit) {
      const { bytesRead } = await handle.read(buffer, 0, Math.min(buffer.length, limit - total), null);
      if (bytesRead === 0) break;
      scanner.push(buffer.subarray(0, bytesRead));
      total += bytesRead;
    }
    scanner.end();
  } finally {
    await handle.close();
  }
}

/** Cuckoo's limits for the `strings` section: 2048 strings of at most 1024 characters. */
export const STRINGS_MAX_COUNT = 2048;
export const STRINGS_MAX_LENGTH = 1024;

/**
 * Collects strings as Cuckoo lists them: every ASCII string first, then the UTF-16LE ones, each in file
 * order, cut to `maxCount` strings of at most `maxLength` characters.
 */
export class StringCollector {
  private readonly ascii: string[] = [];
  private readonly wide: Array<{ text: string; offset: number }> = [];

  constructor(
    private readonly maxCount = STRINGS_MAX_COUNT,
    private readonly maxLength = STRINGS_MAX_LENGTH,
  ) {}

  readonly sink: StringSink = (found) => {
    if (found.continued) return;
    const text = found.text.slice(0, this.maxLength);
    if (!found.wide) {
      if (this.ascii.length < this.maxCount) this.ascii.push(text);
    } else if (this.wide.length < this.maxCount) {
      this.wide.push({ text, offset: found.offset });
    }
  };

  /** Wide strings come from two alignments, each in order; merging by offset restores file order. */
  result(): string[] {
    const wide = [...this.wide].sort((a, b) => a.offset - b.offset).map((entry) => entry.text);
    return [...this.ascii, ...wide].slice(0, this.maxCount);
  }
}

// URLs as found in binaries: scheme, host (name, IPv4 or bracketed IPv6), optional port and path.
const URL_PATTERN =
  /(?:https?|ftps?):\/\/(?:[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?)*|\[[0-9A-Fa-f:.]+\])(?::\d{1,5})?(?:[/?#][A-Za-z0-9\-._~%!$&'()*+,;=:@/?#]*)?/g;

export const URLS_MAX_COUNT = 1000;

export function findUrls(text: string): string[] {
  return text.match(URL_PATTERN) ?? [];
}

/** Unique URLs from every string, in the order first seen, at most `maxCount`. */
export class UrlCollector {
  private readonly urls = new Set<string>();

  constructor(private readonly maxCount = URLS_MAX_COUNT) {}

  readonly sink: StringSink = (found) => {
    if (this.urls.size >= this.maxCount) return;
    for (const url of findUrls(found.text)) {
      if (this.urls.size < this.maxCount) this.urls.add(url);
    }
  };

  result(): string[] {
    return [...this.urls];
  }
}

/** Sends each string to several sinks. */
export function fanOut(...sinks: StringSink[]): StringSink {
  return (found) => {
    for (const sink of sinks) sink(found);
  };
}
