import { createReadStream } from 'node:fs';
import { createInterface } from 'node:readline';
import { isRegularFile } from '../../util/safe-open.js';
import type { ProcessingModule } from '../types.js';

/** Lines kept per log: a sample printing in a loop must not fill the report. */
const MAX_LOG_LINES = 10000;

/**
 * analysis.log and cuckoo.log lines, and the task's errors and actions, as Cuckoo's debug section; plus
 * the sleeps the machine ended early (logs/supervisor.jsonl), when there were any.
 */
export const debugModule: ProcessingModule<'debug'> = {
  key: 'debug',
  async run(input) {
    const errors = [...new Set(input.errors.map((error) => error.message).filter((message) => message.trim() !== ''))];
    const action = [...new Set(input.errors.map((error) => error.action).filter((name) => name !== ''))];
    const skipped = (await input.supervisorRecord()).sleeps;
    return {
      log: await readLines(input.paths.analysisLog),
      cuckoo: await readLines(input.paths.taskLog),
      action,
      errors,
      ...(skipped.length > 0 ? { skipped_sleeps: skipped } : {}),
    };
  },
};

async function readLines(path: string): Promise<string[]> {
  if (!(await isRegularFile(path))) return [];
  const lines: string[] = [];
  let skipped = 0;
  for await (const line of createInterface({ input: createReadStream(path), crlfDelay: Infinity })) {
    if (lines.length < MAX_LOG_LINES) lines.push(line);
    else skipped++;
  }
  if (skipped > 0) lines.push(`... ${skipped} more lines in ${path}`);
  return lines;
}
