import { createWriteStream } from 'node:fs';
import { rename, rm } from 'node:fs/promises';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { internal } from '../errors.js';
import type { Report } from '../report/report-types.js';

/** Cuckoo's jsondump default (`reporting.conf [jsondump] indent = 4`). */
export const JSON_INDENT = 4;
/** Text is handed to the file in pieces of about this size. */
const CHUNK_CHARS = 64 * 1024;

/**
 * Writes report.json as Cuckoo 2.0's jsondump does (Python 2's json.dump with indent 4): keys in the report's
 * order, ", " item separators (so lines end in a space after the comma), non-ASCII as \uXXXX, no final newline.
 * The text is produced and written piece by piece, so a report with millions of calls never exists as one
 * string; it goes to a temporary file renamed into place, so readers never see half a report.
 */
export async function writeJsonReport(report: Report, path: string): Promise<void> {
  const temporary = `${path}.tmp`;
  try {
    await pipeline(Readable.from(jsonChunks(report, JSON_INDENT)), createWriteStream(temporary));
    await rename(temporary, path);
  } catch (error) {
    await rm(temporary, { force: true });
    throw error;
  }
}

/** The JSON text of a value in pieces of about 64 KiB, formatted as Python 2's json.dumps(indent=...) does. */
export function* jsonChunks(value: unknown, indent = JSON_INDENT): Generator<string> {
  const writer = new ChunkedJson(indent);
  yield* writer.value(value, 0);
  if (writer.pending !== '') yield writer.pending;
}

class ChunkedJson {
  pending = '';
  readonly #open = new Set<object>();

  constructor(private readonly indent: number) {}

  *value(value: unknown, depth: number): Generator<string> {
    const plain = toPlain(value);
    if (plain === null || typeof plain !== 'object') {
      this.pending += scalar(plain);
    } else if (Array.isArray(plain)) {
      yield* this.#container(plain, '[', ']', depth, plain.map((item) => [undefined, item] as const));
    } else {
      const entries = Object.entries(plain).filter(([, item]) => isSerializable(item));
      yield* this.#container(plain, '{', '}', depth, entries);
    }
    if (this.pending.length >= CHUNK_CHARS) {
      yield this.pending;
      this.pending = '';
    }
  }

  *#container(
    container: object,
    open: string,
    close: string,
    depth: number,
    entries: ReadonlyArray<readonly [string | undefined, unknown]>,
  ): Generator<string> {
    if (entries.length === 0) {
      this.pending += open + close;
      return;
    }
    if (this.#open.has(container)) throw internal('the report refers to itself and cannot be written as JSON');
    this.#open.add(container);
    const inner = '\n' + ' '.repeat(this.indent * (depth + 1));
    this.pending += open;
    for (const [index, [key, item]] of entries.entries()) {
      this.pending += (index === 0 ? '' : ', ') + inner;
      if (key !== undefined) this.pending += `${quote(key)}: `;
      yield* this.value(isSerializable(item) ? item : null, depth + 1);
    }
    this.pending += '\n' + ' '.repeat(this.indent * depth) + close;
    this.#open.delete(container);
  }
}

function isSerializable(value: unknown): boolean {
  return value !== undefined && typeof value !== 'function' && typeof value !== 'symbol';
}

/** What JSON.stringify would serialize in a value's place: its toJSON() result, bigints as numbers. */
function toPlain(value: unknown): unknown {
  if (typeof value === 'bigint') return Number(value);
  if (value !== null && typeof value === 'object' && typeof (value as { toJSON?: unknown }).toJSON === 'function') {
    return (value as { toJSON(): unknown }).toJSON();
  }
  return value;
}

function scalar(value: unknown): string {
  if (typeof value === 'string') return quote(value);
  // Python would write NaN/Infinity, which strict JSON parsers reject; null keeps the file valid JSON.
  if (typeof value === 'number') return Number.isFinite(value) ? String(value) : 'null';
  if (typeof value === 'boolean') return value ? 'true' : 'false';
  return 'null';
}

/** A JSON string as Python's ensure_ascii writes it: everything outside printable ASCII as \uXXXX. */
export function quote(text: string): string {
  return JSON.stringify(text).replace(/[\u007f-\uffff]/g, (char) => `\\u${char.charCodeAt(0).toString(16).padStart(4, '0')}`);
}
