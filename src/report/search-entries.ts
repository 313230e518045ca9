import { isIP } from 'node:net';
import { posix } from 'node:path';
import type { SearchEntry, SearchField } from './search-fields.js';

/**
 * What the search index keeps of one report: the target as results show it, the score, and every
 * searchable value with its field. Pure: the same report always gives the same document. Reports read
 * back from disk are taken as they come, so every section is looked at defensively (a missing or
 * odd-shaped section gives no entries, never an error).
 */
export interface SearchDocument {
  target: string;
  score: number;
  entries: SearchEntry[];
}

/** Longest value kept; a longer one (an inline script in a command line) is cut. */
const MAX_VALUE = 2048;
/** Values kept per field, so that a report with a million DNS names does not make a million rows. */
const MAX_PER_FIELD = 1000;
const HASH_FIELDS = ['sha256', 'md5', 'sha1', 'ssdeep'] as const;

export function searchDocumentOf(report: unknown): SearchDocument {
  const root = record(report);
  const info = record(root.info);
  return {
    target: targetLabelOf(record(root.target)),
    score: typeof info.score === 'number' && Number.isFinite(info.score) ? info.score : 0,
    entries: searchEntriesOf(root),
  };
}

export function searchEntriesOf(report: unknown): SearchEntry[] {
  const root = record(report);
  const entries = new EntryList();
  targetEntries(record(root.target), entries);
  entries.add('imphash', record(root.static).pe_imphash);
  droppedEntries(list(root.dropped), entries);
  networkEntries(record(root.network), entries);
  behaviourEntries(record(root.behavior), entries);
  signatureEntries(list(root.signatures), entries);
  return entries.entries;
}

/** A file unpacked from an archive shows as `member @ archive`, as report.target.human says. */
function targetLabelOf(target: Record<string, unknown>): string {
  for (const key of ['human', 'url']) if (typeof target[key] === 'string' && target[key] !== '') return target[key] as string;
  const name = record(target.file).name;
  return typeof name === 'string' ? name : '';
}

function targetEntries(target: Record<string, unknown>, entries: EntryList): void {
  fileEntries(record(target.file), entries);
  entries.add('filename', target.filename);
  const archive = record(target.archive);
  fileEntries(archive, entries);
  if (typeof target.url === 'string') urlEntries(target.url, entries);
}

/** A file's hashes and name (FileInfo; the host path in `path` is never indexed). */
function fileEntries(file: Record<string, unknown>, entries: EntryList): void {
  for (const field of HASH_FIELDS) entries.add(field, file[field]);
  entries.add('filename', file.name);
}

/** Dropped files by their hashes and their path in the machine, whole and as a base name. */
function droppedEntries(dropped: unknown[], entries: EntryList): void {
  for (const item of dropped) {
    const file = record(item);
    for (const field of HASH_FIELDS) entries.add(field, file[field]);
    if (typeof file.filepath === 'string') {
      entries.add('filename', posix.basename(file.filepath));
      entries.add('filename', file.filepath);
    }
  }
}

function networkEntries(network: Record<string, unknown>, entries: EntryList): void {
  for (const host of list(network.hosts)) entries.add('ip', host);
  for (const item of list(network.domains)) {
    const domain = record(item);
    entries.add('domain', domain.domain);
    entries.add('ip', domain.ip);
  }
  for (const item of list(network.dns)) {
    const query = record(item);
    entries.add('domain', query.request);
    for (const answer of list(query.answers)) {
      const { type, data } = record(answer);
      if (type === 'A' || type === 'AAAA') entries.add('ip', data);
    }
  }
  for (const item of list(network.http)) {
    const request = record(item);
    if (typeof request.host === 'string') hostEntry(request.host, entries);
    if (typeof request.uri === 'string') urlEntries(request.uri, entries);
  }
  for (const item of list(network.tls)) entries.add('domain', record(item).sni);
}

function behaviourEntries(behavior: Record<string, unknown>, entries: EntryList): void {
  for (const item of list(behavior.processes)) entries.add('cmdline', record(item).command_line);
  const summary = record(behavior.summary);
  for (const value of list(summary.command_line)) entries.add('cmdline', value);
  for (const value of list(summary.resolves_host)) entries.add('domain', value);
  for (const value of list(summary.connects_ip)) entries.add('ip', value);
  for (const value of list(summary.connects_host)) if (typeof value === 'string') hostEntry(value, entries);
  for (const value of list(summary.fetches_url)) if (typeof value === 'string') urlEntries(value, entries);
  // Cuckoo's Windows monitor reports mutexes here; nestbox's Linux reports have none yet.
  for (const value of list(summary.mutex)) entries.add('mutex', value);
}

function signatureEntries(signatures: unknown[], entries: EntryList): void {
  for (const item of signatures) {
    const signature = record(item);
    entries.add('signature', signature.name);
    for (const technique of Object.keys(record(signature.ttp))) entries.add('attack', technique);
  }
}

/** A URL, and its host as a domain or an address. */
function urlEntries(url: string, entries: EntryList): void {
  entries.add('url', url);
  const host = hostOfUrl(url);
  if (host !== undefined) hostEntry(host, entries);
}

function hostEntry(host: string, entries: EntryList): void {
  const bare = host.replace(/^\[(.*)\]$/, '$1');
  entries.add(isIP(bare) === 0 ? 'domain' : 'ip', bare);
}

function hostOfUrl(url: string): string | undefined {
  try {
    const host = new URL(url).hostname;
    return host === '' ? undefined : host;
  } catch {
    return undefined;
  }
}

/** Entries without repeats, empty values or overlong ones, at most MAX_PER_FIELD per field. */
class EntryList {
  readonly entries: SearchEntry[] = [];
  readonly #seen = new Set<string>();
  readonly #perField = new Map<SearchField, number>();

  add(field: SearchField, value: unknown): void {
    if (typeof value !== 'string') return;
    const kept = value.trim().slice(0, MAX_VALUE);
    if (kept === '') return;
    const key = `${field}\0${kept}`;
    const count = this.#perField.get(field) ?? 0;
    if (this.#seen.has(key) || count >= MAX_PER_FIELD) return;
    this.#seen.add(key);
    this.#perField.set(field, count + 1);
    this.entries.push({ field, value: kept });
  }
}

function record(value: unknown): Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value) ? (value as Record<string, unknown>) : {};
}

function list(value: unknown): unknown[] {
  return Array.isArray(value) ? value : [];
}
