import { mkdir, rename, writeFile } from 'node:fs/promises';
import type { AnalysisPaths } from '../storage/layout.js';
import type { Report, SignatureMatch } from './report-types.js';

/**
 * What the pipeline needs from the signature engine and the report writers. The defaults below are
 * the INTEGRATION POINT: until `src/signatures/index.ts` (runSignatures, scoreOf) and
 * `src/reporting/index.ts` (writeReports) land, they stand in with no signatures, a score of 0 and a
 * plain reports/report.json. Replace each with the real import once it exists.
 */
export interface PipelineHooks {
  runSignatures(report: Report, paths: AnalysisPaths): Promise<SignatureMatch[]>;
  scoreOf(matches: readonly SignatureMatch[]): number;
  writeReports(report: Report, paths: AnalysisPaths): Promise<void>;
}

export const defaultHooks: PipelineHooks = {
  // INTEGRATION POINT: runSignatures from src/signatures/index.ts.
  async runSignatures() {
    return [];
  },
  // INTEGRATION POINT: scoreOf from src/signatures/index.ts.
  scoreOf() {
    return 0;
  },
  // INTEGRATION POINT: writeReports from src/reporting/index.ts.
  async writeReports(report, paths) {
    await mkdir(paths.reports, { recursive: true });
    const temporary = `${paths.reportJson}.tmp`;
    await writeFile(temporary, JSON.stringify(report, null, 4));
    await rename(temporary, paths.reportJson);
  },
};
