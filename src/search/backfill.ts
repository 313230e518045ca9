import { readFile, stat } from 'node:fs/promises';
import { setImmediate as nextTurn } from 'node:timers/promises';
import type { Logger } from 'pino';
import type { Stores } from '../db/index.js';
import { searchDocumentOf } from '../report/search-entries.js';
import type { StorageLayout } from '../storage/layout.js';

export interface BackfillContext {
  stores: Stores;
  layout: StorageLayout;
  log: Logger;
}

export interface BackfillTally {
  indexed: number;
  /** Reports that could not be read (missing, too large, not JSON): they stay unindexed until rereported. */
  skipped: number;
}

export interface Backfill {
  /** Settles when every reported task has been looked at, or after stop(). */
  done: Promise<BackfillTally>;
  stop(): Promise<BackfillTally>;
}

/** Tasks asked for at a time. */
const BATCH = 50;
/**
 * Larger report.json files are left alone: parsing one holds the event loop (about a second for
 * 64 MiB), and the API shares it. A rereport indexes such a task from its fresh report instead.
 */
export const MAX_BACKFILL_REPORT_BYTES = 32 << 20;

/**
 * Indexes, in the background, the reported tasks the search index does not hold: those reported before
 * it existed, or whose indexing failed. One report at a time, yielding to the event loop between
 * them, so the API answers meanwhile; several nodes may run it at once (a task indexed by another
 * node, or by a fresh report meanwhile, is left as it is).
 */
export function startSearchBackfill(ctx: BackfillContext): Backfill {
  const tally: BackfillTally = { indexed: 0, skipped: 0 };
  let stopped = false;
  const done = run(ctx, tally, () => stopped).then(
    () => {
      if (tally.indexed + tally.skipped > 0) ctx.log.info(tally, 'search index: earlier reports indexed');
      return tally;
    },
    (error: unknown) => {
      ctx.log.warn({ err: error, ...tally }, 'search index: indexing earlier reports stopped');
      return tally;
    },
  );
  return {
    done,
    stop() {
      stopped = true;
      return done;
    },
  };
}

async function run(ctx: BackfillContext, tally: BackfillTally, stopped: () => boolean): Promise<void> {
  let after = 0;
  while (!stopped()) {
    const ids = await ctx.stores.search.unindexedReported(after, BATCH);
    if (ids.length === 0) return;
    for (const id of ids) {
      if (stopped()) return;
      if (await indexStoredReport(ctx, id)) tally.indexed++;
      else tally.skipped++;
      after = id;
      await nextTurn();
    }
  }
}

/** True when the task's report.json was read and indexed (or another node got there first). */
async function indexStoredReport(ctx: BackfillContext, taskId: number): Promise<boolean> {
  const file = ctx.layout.analysis(taskId).reportJson;
  try {
    const { size } = await stat(file);
    if (size > MAX_BACKFILL_REPORT_BYTES) {
      ctx.log.warn({ task: taskId, size }, 'search index: report.json too large to index at start; rereport the task to index it');
      return false;
    }
    const document = searchDocumentOf(JSON.parse(await readFile(file, 'utf8')));
    await ctx.stores.search.add(taskId, document);
    return true;
  } catch (error) {
    ctx.log.warn({ err: error, task: taskId }, 'search index: the stored report could not be indexed');
    return false;
  }
}
