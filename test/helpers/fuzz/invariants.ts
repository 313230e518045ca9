import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { cuckooJson } from '../../../src/api/json.js';
import type { RawAnswer } from '../raw-http.js';

/** A staged upload's name: it is a server path even without the folder in front of it. */
const STAGED_NAME = /upload-[0-9a-f]{8}-[0-9a-f]{4}-/;

/**
 * What is wrong with an answer to hostile input: none for a success or a clean refusal, which is a
 * 4xx whose body is `{"message": ...}` written as json.ts writes it and names no host path.
 */
export function answerProblems(answer: RawAnswer, hostPaths: readonly string[], head = false): string[] {
  if (answer.status === 0) return ['no answer'];
  if (answer.status >= 500) return [`status ${answer.status}: ${answer.body.slice(0, 200)}`];
  if (answer.status < 400 || head) return [];
  let parsed: unknown;
  try {
    parsed = JSON.parse(answer.body);
  } catch {
    return [`status ${answer.status} with a body that is not JSON: ${answer.body.slice(0, 200)}`];
  }
  const message = (parsed as { message?: unknown } | null)?.message;
  const problems: string[] = [];
  if (typeof message !== 'string') problems.push(`status ${answer.status} without a message: ${answer.body.slice(0, 200)}`);
  if (!answer.headers['content-type']?.startsWith('application/json')) problems.push(`content-type ${answer.headers['content-type']}`);
  if (answer.body !== cuckooJson(parsed) && answer.body !== cuckooJson(parsed, true)) problems.push(`JSON not written as json.ts writes it: ${answer.body.slice(0, 200)}`);
  if (hostPaths.some((path) => answer.body.includes(path)) || STAGED_NAME.test(answer.body)) problems.push(`names a host path: ${answer.body.slice(0, 300)}`);
  return problems;
}

export interface StoreCounts {
  tasks: number;
  samples: number;
  submissions: number;
  files: number;
}

export type RowCounter = (table: 'tasks' | 'samples' | 'submissions') => Promise<number>;

/** Rows of the tables a create request writes, and every file below the given folders. */
export async function storeCounts(rows: RowCounter, folders: readonly string[]): Promise<StoreCounts> {
  const [tasks, samples, submissions] = await Promise.all([rows('tasks'), rows('samples'), rows('submissions')]);
  return { tasks, samples, submissions, files: folders.reduce((sum, folder) => sum + countFiles(folder), 0) };
}

function countFiles(folder: string): number {
  let count = 0;
  for (const entry of readdirSync(folder, { withFileTypes: true })) {
    count += entry.isDirectory() ? 1 + countFiles(join(folder, entry.name)) : 1;
  }
  return count;
}
