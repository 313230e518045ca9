import { mkdir } from 'node:fs/promises';
import { internal } from '../errors.js';
import type { Report } from '../report/report-types.js';
import type { AnalysisPaths } from '../storage/layout.js';
import { writeHtmlReport } from './html.js';
import { writeJsonReport } from './json.js';

const WRITERS: ReadonlyArray<readonly [string, (report: Report, paths: AnalysisPaths) => Promise<void>]> = [
  ['report.json', (report, paths) => writeJsonReport(report, paths.reportJson)],
  ['report.html', writeHtmlReport],
];

/**
 * Writes reports/report.json and reports/report.html. Each writer runs whatever happens to the other, so a
 * failure in one never costs the other its file; afterwards any failure is thrown as one internal error
 * naming the writers that failed (the cause holds their errors).
 */
export async function writeReports(report: Report, paths: AnalysisPaths): Promise<void> {
  await mkdir(paths.reports, { recursive: true });
  const results = await Promise.allSettled(WRITERS.map(([, write]) => write(report, paths)));
  const failed = results.flatMap((result, index) => (result.status === 'rejected' ? [{ name: WRITERS[index]?.[0] ?? '?', error: result.reason as unknown }] : []));
  if (failed.length === 0) return;
  throw internal(`writing ${failed.map((failure) => failure.name).join(' and ')} failed: ${failed.map((failure) => messageOf(failure.error)).join('; ')}`, {
    cause: failed.length === 1 ? failed[0]?.error : new AggregateError(failed.map((failure) => failure.error)),
    context: { dir: paths.reports, writers: failed.map((failure) => failure.name) },
  });
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
