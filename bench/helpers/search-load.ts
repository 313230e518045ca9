import { searchDocumentOf } from '../../src/report/search-entries.js';
import type { SearchField } from '../../src/report/search-fields.js';
import type { TestServer } from '../../test/helpers/server.js';
import { taskRow } from '../../test/helpers/tasks.js';
import { type Random, seededRandom, SyntheticReports } from '../search-reports.js';

// Many synthetic analyses in a server's search index, and queries of each kind drawn from what was
// indexed: shared by the search bench (search.ts) and the web interface's bench (web.ts).

/** Indexed values kept per field to draw queries from. */
const KEPT_VALUES = 5000;

export interface QueryKind {
  label: string;
  field?: SearchField;
  /** Which indexed values it is drawn from, and how a value becomes the query text. */
  from: SearchField;
  text?: (value: string, random: Random) => string;
}

const words = (value: string) => value.split(/[^\p{L}\p{N}_-]+/u).filter((word) => word.length >= 3);
const someWords = (value: string, random: Random) => {
  const all = words(value);
  const start = Math.floor(random() * Math.max(1, all.length - 1));
  return all.slice(start, start + 2).join(' ') || value;
};

export const KINDS: QueryKind[] = [
  { label: 'sha256, whole', field: 'sha256', from: 'sha256' },
  { label: 'md5, first 12', field: 'md5', from: 'md5', text: (value) => value.slice(0, 12) },
  { label: 'sha1, any field', from: 'sha1' },
  { label: 'ssdeep, whole', field: 'ssdeep', from: 'ssdeep' },
  { label: 'imphash, whole', field: 'imphash', from: 'imphash' },
  { label: 'filename, whole', field: 'filename', from: 'filename' },
  { label: 'domain, whole', field: 'domain', from: 'domain' },
  { label: 'domain, one label', field: 'domain', from: 'domain', text: (value) => value.split('.').at(-2) ?? value },
  { label: 'domain, any field', from: 'domain' },
  { label: 'ip, whole', field: 'ip', from: 'ip' },
  { label: 'url, first 30', field: 'url', from: 'url', text: (value) => value.slice(0, 30) },
  { label: 'signature, whole', field: 'signature', from: 'signature' },
  { label: 'attack, technique', field: 'attack', from: 'attack', text: (value) => value.split('.')[0]! },
  { label: 'mutex, whole', field: 'mutex', from: 'mutex' },
  { label: 'cmdline, two words', field: 'cmdline', from: 'cmdline', text: someWords },
  { label: 'broad: "tmp", any', from: 'cmdline', text: () => 'tmp' },
];

export interface Indexed {
  entries: number;
  seconds: number;
  values: Map<SearchField, string[]>;
}

export async function indexSynthetic(server: TestServer, analyses: number): Promise<Indexed> {
  const reports = new SyntheticReports(12);
  const samples = new Samples(seededRandom(7));
  let entries = 0;
  const started = performance.now();
  for (let index = 0; index < analyses; index++) {
    const id = await server.ctx.stores.tasks.insert(taskRow({ status: 'reported', target: '/srv/uploads/sample', completed_on: new Date().toISOString() }));
    const document = searchDocumentOf(reports.report(id));
    await server.ctx.stores.search.replace(id, document);
    entries += document.entries.length;
    for (const entry of document.entries) samples.add(entry.field, entry.value);
  }
  return { entries, seconds: (performance.now() - started) / 1000, values: samples.values };
}

/** A uniform sample of at most KEPT_VALUES values per field (reservoir sampling). */
class Samples {
  readonly values = new Map<SearchField, string[]>();
  readonly #seen = new Map<SearchField, number>();

  constructor(private readonly random: Random) {}

  add(field: SearchField, value: string): void {
    const kept = this.values.get(field) ?? [];
    this.values.set(field, kept);
    const seen = (this.#seen.get(field) ?? 0) + 1;
    this.#seen.set(field, seen);
    if (kept.length < KEPT_VALUES) kept.push(value);
    else if (this.random() * seen < KEPT_VALUES) kept[Math.floor(this.random() * KEPT_VALUES)] = value;
  }
}

export function queriesOf(kind: QueryKind, values: Map<SearchField, string[]>, random: Random, count: number): Array<{ q: string; field?: SearchField }> {
  const pool = values.get(kind.from) ?? [];
  if (pool.length === 0) return [];
  return Array.from({ length: count }, () => {
    const value = pool[Math.floor(random() * pool.length)]!;
    return { q: kind.text ? kind.text(value, random) : value, field: kind.field };
  });
}

export async function ask(server: TestServer, query: { q: string; field?: SearchField }): Promise<{ total: number; tookMs: number }> {
  const params = new URLSearchParams({ q: query.q, ...(query.field ? { field: query.field } : {}) });
  const { status, body } = await server.json<{ total: number; tookMs: number; message?: string }>(`/ui/api/search?${params}`);
  if (status !== 200) throw new Error(`search ${params} answered ${status}: ${body.message}`);
  return body;
}

export function percentile(values: number[], fraction: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.ceil(fraction * sorted.length) - 1)] ?? 0;
}

