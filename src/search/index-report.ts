import type { Logger } from 'pino';
import type { Stores } from '../db/index.js';
import { searchDocumentOf } from '../report/search-entries.js';
import type { Report } from '../report/report-types.js';

export interface IndexingContext {
  stores: Stores;
  log: Logger;
}

/**
 * Puts a freshly written report into the search index, replacing what the task had there (a rereport).
 * The report stands whatever happens here: a failure is logged, and a task left without an entry is
 * indexed from its report.json at the next start (search/backfill.ts).
 */
export async function indexReport(ctx: IndexingContext, taskId: number, report: Report): Promise<void> {
  try {
    await ctx.stores.search.replace(taskId, searchDocumentOf(report));
  } catch (error) {
    ctx.log.warn({ err: error, task: taskId }, 'the report could not be added to the search index');
  }
}
