import { rename, rm, writeFile } from 'node:fs/promises';
import type { Report } from '../report/report-types.js';
import type { AnalysisPaths } from '../storage/layout.js';
import { NESTBOX_RELEASE } from '../version.js';
import { behaviorSummary, processTree } from './html-behavior.js';
import { html } from './html-escape.js';
import { dropped, errors, staticInfo, strings } from './html-files.js';
import { network } from './html-network.js';
import { header, navigation, overview, targetName } from './html-overview.js';
import { screenshots } from './html-screenshots.js';
import { signatures } from './html-signatures.js';
import { STYLE } from './html-style.js';

/**
 * No script, no remote anything: the page can load only its inline style and its embedded images, so even
 * markup that slipped through escaping could neither run nor call out.
 */
const CONTENT_SECURITY_POLICY = "default-src 'none'; img-src data:; style-src 'unsafe-inline'; base-uri 'none'; form-action 'none'";

const SECTIONS: ReadonlyArray<readonly [string, string]> = [
  ['overview', 'Overview'],
  ['signatures', 'Signatures'],
  ['processes', 'Process tree'],
  ['behavior', 'Behaviour'],
  ['network', 'Network'],
  ['dropped', 'Dropped files'],
  ['static', 'Static analysis'],
  ['strings', 'Strings'],
  ['screenshots', 'Screenshots'],
];

/** report.html: one self-contained page for an analyst, readable offline, every report value escaped. */
export async function renderHtmlReport(report: Report, paths: AnalysisPaths): Promise<string> {
  const page = html`<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="${CONTENT_SECURITY_POLICY}">
<meta name="referrer" content="no-referrer">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>nestbox analysis ${report.info.id}: ${targetName(report).slice(0, 200)}</title>
<style>${STYLE}</style>
</head>
<body>
${header(report)}
${navigation(SECTIONS)}
<main>
${overview(report)}
${signatures(report.signatures ?? [])}
${processTree(report.behavior)}
${behaviorSummary(report.behavior)}
${network(report.network)}
${dropped(report.dropped)}
${staticInfo(report)}
${strings(report.strings)}
${await screenshots(report, paths)}
${errors(report)}
</main>
<footer>nestbox ${NESTBOX_RELEASE}, report generated ${new Date().toISOString().replace('T', ' ').slice(0, 19)} UTC. Everything shown comes from the analysed sample: treat it as hostile.</footer>
</body>
</html>
`;
  return page.text;
}

export async function writeHtmlReport(report: Report, paths: AnalysisPaths): Promise<void> {
  const temporary = `${paths.reportHtml}.tmp`;
  try {
    await writeFile(temporary, await renderHtmlReport(report, paths));
    await rename(temporary, paths.reportHtml);
  } catch (error) {
    await rm(temporary, { force: true });
    throw error;
  }
}
