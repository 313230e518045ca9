/**
 * The guest supervisor's record (guest/analyzer/supervision.py uploads it once, at the end), written as
 * the task's logs/supervisor.jsonl in the linux machine's format: shortened sleeps (recorded, then
 * counted) and captured files.
 * The guest is hostile ground: only well-formed lines of those two kinds are kept, with their known
 * fields and nothing else, and the record's size is capped.
 */
export const MAX_SUPERVISOR_RECORD_BYTES = 4 * 2 ** 20;

const CALL_NAME = /^[a-z0-9_]{1,40}$/;
const SHA256 = /^[0-9a-f]{64}$/;
const MAX_PATH = 4096;

const isCount = (value: unknown): value is number => Number.isSafeInteger(value) && (value as number) >= 0;
const isSeconds = (value: unknown): value is number => typeof value === 'number' && Number.isFinite(value) && value >= 0;

function sleepLine(line: Record<string, unknown>): object | null {
  const { pid, call, seconds, time } = line;
  if (!isCount(pid) || typeof call !== 'string' || !CALL_NAME.test(call) || !isSeconds(seconds) || !isSeconds(time)) return null;
  return { event: 'sleep', pid, call, seconds, time };
}

function unrecordedLine(line: Record<string, unknown>): object | null {
  const { pid, call, count } = line;
  if (!isCount(pid) || typeof call !== 'string' || (call !== '' && !CALL_NAME.test(call)) || !isCount(count) || count === 0) return null;
  return { event: 'unrecorded', pid, call, count };
}

function captureLine(line: Record<string, unknown>): object | null {
  const { reason, pid, filepath, size, sha256 } = line;
  if (reason !== 'exec' && reason !== 'delete') return null;
  if (!isCount(pid) || typeof filepath !== 'string' || filepath.length > MAX_PATH || !isCount(size) || typeof sha256 !== 'string' || !SHA256.test(sha256)) return null;
  return { event: 'capture', reason, pid, filepath, size, sha256 };
}

/** A Map, not an object: a line's `event` of "constructor" must find nothing. */
const LINE_KINDS = new Map<unknown, (line: Record<string, unknown>) => object | null>([
  ['sleep', sleepLine],
  ['unrecorded', unrecordedLine],
  ['capture', captureLine],
]);

/** The JSON lines of the record worth keeping, each re-made from its checked fields. */
export function supervisorRecordLines(text: string): string {
  const kept: string[] = [];
  for (const raw of text.split('\n')) {
    let line: unknown;
    try {
      line = JSON.parse(raw);
    } catch {
      continue;
    }
    if (typeof line !== 'object' || line === null) continue;
    const fields = line as Record<string, unknown>;
    const clean = LINE_KINDS.get(fields.event)?.(fields) ?? null;
    if (clean) kept.push(`${JSON.stringify(clean)}\n`);
  }
  return kept.join('');
}
