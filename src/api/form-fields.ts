import type { Config } from '../config/schema.js';
import { invalidInput } from '../errors.js';
import type { TaskParams } from '../tasks/create.js';
import { bareWebAddress, isHttpUrl } from './web-address.js';

/**
 * Form-field parsing shared by the three task-creation endpoints. Cuckoo takes its fields unchecked;
 * nestbox accepts every form Cuckoo clients send and answers a 400 naming the field for anything else,
 * the same way on all three endpoints. An empty value means "not given".
 */

/** Form fields by name; as with Flask's `request.form[...]`, the first value of a repeated field wins. */
export class FormFields {
  private readonly values = new Map<string, string>();

  add(name: string, value: string): void {
    if (!this.values.has(name)) this.values.set(name, value);
  }

  /** The value, or undefined when the field is absent or empty. */
  get(name: string): string | undefined {
    const value = this.values.get(name);
    return value === '' ? undefined : value;
  }

  text(name: string): string {
    return this.values.get(name) ?? '';
  }

  /** An `application/x-www-form-urlencoded` body. */
  static fromQueryString(text: string): FormFields {
    const fields = new FormFields();
    for (const [name, value] of new URLSearchParams(text)) fields.add(name, value);
    return fields;
  }
}

const TRUE_WORDS = new Set(['true', 'yes', 'on', '1']);
const FALSE_WORDS = new Set(['false', 'no', 'off', 'none', '0']);

/** Cuckoo's boolean words (any case) and integers (non-zero is true); undefined when not given. */
export function parseBoolean(fields: FormFields, name: string): boolean | undefined {
  const raw = fields.get(name);
  if (raw === undefined) return undefined;
  const word = raw.trim().toLowerCase();
  if (TRUE_WORDS.has(word)) return true;
  if (FALSE_WORDS.has(word)) return false;
  if (/^[+-]?\d+$/.test(word)) return Number(word) !== 0;
  throw invalidInput(`${name} must be a boolean (true/false, yes/no, on/off, 1/0); got ${JSON.stringify(raw)}`);
}

export function parseInteger(fields: FormFields, name: string, min: number, max: number): number | undefined {
  const raw = fields.get(name);
  if (raw === undefined) return undefined;
  const text = raw.trim();
  const value = /^[+-]?\d+$/.test(text) ? Number(text) : Number.NaN;
  if (!Number.isSafeInteger(value) || value < min || value > max) {
    throw invalidInput(`${name} must be an integer from ${min} to ${max}; got ${JSON.stringify(raw)}`);
  }
  return value;
}

/** Cuckoo's clock format `%m-%d-%Y %H:%M:%S`, read as UTC so the API shows the same wall time back. */
export function parseClock(raw: string | undefined, now: Date): string {
  if (raw === undefined) return now.toISOString();
  const match = /^(\d{1,2})-(\d{1,2})-(\d{4}) (\d{1,2}):(\d{1,2}):(\d{1,2})$/.exec(raw.trim());
  if (match) {
    const [month, day, year, hour, minute, second] = match.slice(1).map(Number);
    const date = new Date(Date.UTC(year, month - 1, day, hour, minute, second));
    const roundTrips = date.getUTCMonth() === month - 1 && date.getUTCDate() === day && hour < 24 && minute < 60 && second < 60;
    if (roundTrips && year >= 1900) return date.toISOString();
  }
  throw invalidInput(`clock must be a time like "01-02-2019 10:11:12" (%m-%d-%Y %H:%M:%S); got ${JSON.stringify(raw)}`);
}

/** Comma-separated, trimmed, empties dropped, duplicates once. */
export function parseTags(raw: string | undefined): string[] {
  if (raw === undefined) return [];
  return [...new Set(raw.split(',').map((tag) => tag.trim()).filter((tag) => tag !== ''))];
}

function boundedText(fields: FormFields, name: string, maxLength: number): string {
  const value = fields.text(name);
  if (value.length > maxLength) throw invalidInput(`${name} must be at most ${maxLength} characters; got ${value.length}`);
  return value;
}

export interface ParseOptions {
  now?: Date;
}

export function parseTaskParams(fields: FormFields, config: Config, options: ParseOptions = {}): TaskParams {
  const { tasks } = config;
  return {
    package: boundedText(fields, 'package', 255),
    timeout: parseInteger(fields, 'timeout', 0, tasks.max_timeout) ?? 0,
    priority: parseInteger(fields, 'priority', 1, tasks.max_priority) ?? tasks.default_priority,
    options: fields.text('options'),
    machine: boundedText(fields, 'machine', 255),
    platform: boundedText(fields, 'platform', 255),
    tags: parseTags(fields.get('tags')),
    custom: fields.text('custom'),
    owner: boundedText(fields, 'owner', 64),
    clock: parseClock(fields.get('clock'), options.now ?? new Date()),
    memory: parseBoolean(fields, 'memory') ?? tasks.memory_dump,
    enforceTimeout: parseBoolean(fields, 'enforce_timeout') ?? false,
  };
}

/**
 * The stored name of an uploaded file: its last path component (both `/` and `\` separate, as Cuckoo
 * does). Names that cannot be a file name are refused.
 */
export function uploadBaseName(filename: string | undefined): string {
  if (filename === undefined || filename === '') throw invalidInput('The uploaded file has an empty file name');
  const name = filename.split(/[\\/]/).pop() ?? '';
  if (name === '' || name === '.' || name === '..') {
    throw invalidInput(`The uploaded file name ${JSON.stringify(filename)} does not end in a usable file name`);
  }
  if (/[\0\r\n]/.test(name)) throw invalidInput('The uploaded file name contains a NUL or line-break character');
  if (Buffer.byteLength(name) > 255) throw invalidInput('The uploaded file name is longer than 255 bytes');
  return name;
}

export function parseUrl(fields: FormFields): string {
  const raw = fields.get('url');
  if (raw === undefined) throw invalidInput('No url has been given');
  const url = raw.trim();
  if (isHttpUrl(url)) return url;
  // A bare domain (MISP submits domain attributes this way) is opened as http://, as create/submit does.
  const bare = bareWebAddress(url);
  if (bare !== undefined) return bare;
  throw invalidInput(`url must be an absolute http:// or https:// URL or a domain name; got ${JSON.stringify(raw)}`);
}
