import { mkdir, rename, writeFile } from 'node:fs/promises';
import { runSignatures, scoreOf } from '../signatures/index.js';
import type { AnalysisPaths } from '../storage/layout.js';
import type { Report, SignatureMatch } from './report-types.js';

/**
 * What the pipeline needs from the signature engine and the report writers. Signatures and the score
 * come from `src/signatures/`. The report writer is the INTEGRATION POINT still open: until
 * `src/reporting/index.ts` (writeReports) lands, a plain reports/report.json stands in.
 */
export interface PipelineHooks {
  runSignatures(report: Report, paths: AnalysisPaths): Promise<SignatureMatch[]>;
  scoreOf(matches: readonly SignatureMatch[]): number;
  writeReports(report: Report, paths: AnalysisPaths): Promise<void>;
}

export const defaultHooks: PipelineHooks = {
  runSignatures,
  scoreOf,
  // INTEGRATION POINT: writeReports from src/reporting/index.ts.
  async writeReports(report, paths) {
    await mkdir(paths.reports, { recursive: true });
    const temporary = `${paths.reportJson}.tmp`;
    await writeFile(temporary, JSON.stringify(report, null, 4));
    await rename(temporary, paths.reportJson);
  },
};
