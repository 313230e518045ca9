import { createReadStream } from 'node:fs';
import { join } from 'node:path';
import { EVENTS_FILE, type BehaviorEvent, type EventKind } from '../analysis/events.js';
import type { Report, SignatureMatch } from '../processing/report-types.js';
import type { AnalysisPaths } from '../storage/layout.js';
import { ProcessTable } from './process-table.js';
import type { Signature, SignatureClass, SignatureContext } from './signature.js';

export interface EngineOptions {
  /** Called when a signature throws; the signature is left out of the rest of this analysis. */
  onError?: (signature: string, error: unknown) => void;
}

/**
 * Runs signatures over one analysis: streams `logs/events.jsonl` once, giving each event only to the
 * signatures that asked for its kind, then calls every signature's onComplete with the report. Returns the
 * matches sorted by ascending severity, as Cuckoo orders them.
 */
export async function runSignatureClasses(
  classes: readonly SignatureClass[],
  report: Report,
  paths: AnalysisPaths,
  options: EngineOptions = {},
): Promise<SignatureMatch[]> {
  const active = new Set(classes.map((SignatureType) => new SignatureType()));
  const processes = new ProcessTable();
  const callIndexes = new WeakMap<BehaviorEvent, number>();
  const ctx: SignatureContext = { report, paths, processes, callIndex: (event) => callIndexes.get(event) };
  const fail = (signature: Signature, error: unknown) => {
    active.delete(signature);
    options.onError?.(signature.info.name, error);
  };

  const byKind = dispatchTable(active);
  const perPid = new Map<number, number>();
  for await (const batch of readEventBatches(join(paths.dir, EVENTS_FILE))) {
    for (const event of batch) {
      const index = perPid.get(event.pid) ?? 0;
      perPid.set(event.pid, index + 1);
      callIndexes.set(event, index);
      processes.observe(event);
      for (const signature of byKind.get(event.kind) ?? []) {
        if (!active.has(signature)) continue;
        try {
          signature.onEvent(event, ctx);
        } catch (error) {
          fail(signature, error);
        }
      }
    }
  }

  for (const signature of active) {
    try {
      await signature.onComplete(ctx);
    } catch (error) {
      fail(signature, error);
    }
  }
  return [...active]
    .filter((signature) => signature.matched)
    .map((signature) => signature.result())
    .sort((a, b) => a.severity - b.severity || a.name.localeCompare(b.name));
}

function dispatchTable(signatures: Iterable<Signature>): Map<EventKind, Signature[]> {
  const table = new Map<EventKind, Signature[]>();
  for (const signature of signatures) {
    for (const kind of new Set(signature.kinds)) {
      const list = table.get(kind) ?? [];
      list.push(signature);
      table.set(kind, list);
    }
  }
  return table;
}

/**
 * The events of the log in batches (one per chunk read), so that a million events cost a few thousand
 * awaits rather than a million. Lines that are not events (a torn last line after a crash, garbage) are
 * skipped: one bad line must not cost the analyst every signature. A missing log yields nothing.
 */
export async function* readEventBatches(path: string): AsyncGenerator<BehaviorEvent[]> {
  const stream = createReadStream(path, { encoding: 'utf8', highWaterMark: 1 << 20 });
  let rest = '';
  try {
    for await (const chunk of stream as AsyncIterable<string>) {
      const lines = (rest + chunk).split('\n');
      rest = lines.pop() ?? '';
      yield parseLines(lines);
    }
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return;
    throw error;
  }
  if (rest !== '') yield parseLines([rest]);
}

function parseLines(lines: readonly string[]): BehaviorEvent[] {
  const events: BehaviorEvent[] = [];
  for (const line of lines) {
    const event = parseEvent(line);
    if (event) events.push(event);
  }
  return events;
}

function parseEvent(line: string): BehaviorEvent | null {
  if (line.trim() === '') return null;
  try {
    const value: unknown = JSON.parse(line);
    return isEvent(value) ? value : null;
  } catch {
    return null;
  }
}

function isEvent(value: unknown): value is BehaviorEvent {
  if (value === null || typeof value !== 'object') return false;
  const event = value as Record<string, unknown>;
  return (
    typeof event.kind === 'string' &&
    typeof event.pid === 'number' &&
    typeof event.ts === 'number' &&
    typeof event.comm === 'string' &&
    hasFieldsOf(event)
  );
}

// The fields each kind's signatures read without checking; an event lacking them is malformed.
const REQUIRED: Partial<Record<EventKind, Record<string, 'string' | 'number' | 'object'>>> = {
  'process.fork': { child: 'number' },
  'process.exec': { path: 'string', argv: 'object' },
  'process.rename': { name: 'string' },
  'process.ptrace': { request: 'number', target: 'number' },
  'process.setid': { call: 'string', ids: 'object' },
  'process.kill': { target: 'number', signal: 'number' },
  'file.open': { path: 'string', flags: 'number' },
  'file.write': { path: 'string' },
  'file.rename': { from: 'string', to: 'string' },
  'file.delete': { path: 'string' },
  'file.mkdir': { path: 'string' },
  'file.rmdir': { path: 'string' },
  'file.chmod': { path: 'string', mode: 'number' },
  'file.chown': { path: 'string' },
  'file.link': { from: 'string', to: 'string' },
  'net.connect': { family: 'string', address: 'string', port: 'number' },
  'net.bind': { family: 'string', address: 'string', port: 'number' },
  'memory.memfd': { name: 'string' },
  'memory.exec_map': { call: 'string' },
  'module.load': { call: 'string' },
};

function hasFieldsOf(event: Record<string, unknown>): boolean {
  const fields = REQUIRED[event.kind as EventKind];
  if (!fields) return true;
  for (const [field, type] of Object.entries(fields)) {
    const value = event[field];
    if (typeof value !== type || value === null) return false;
  }
  if (event.kind === 'process.exec' && !(Array.isArray(event.argv) && event.argv.every((arg) => typeof arg === 'string'))) return false;
  if (event.kind === 'process.setid' && !(Array.isArray(event.ids) && event.ids.every((id) => typeof id === 'number'))) return false;
  return true;
}
