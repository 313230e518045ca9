import { readFile, realpath, stat } from 'node:fs/promises';
import { basename, sep } from 'node:path';
import type { Report } from '../report/report-types.js';
import type { AnalysisPaths } from '../storage/layout.js';
import { html, type SafeHtml } from './html-escape.js';
import { section } from './html-parts.js';

/**
 * Screenshots are embedded in the page as data: URIs, so that report.html stays one file that opens
 * anywhere (mailed, copied off the sandbox). Past this total, further screenshots are only linked by
 * their relative path (../shots/NNNN.jpg), which works while the page sits in its analysis folder.
 */
export const MAX_EMBEDDED_BYTES = 24 * 1024 * 1024;
const SHOT_NAME = /^\d+(_small)?\.(jpe?g|png)$/i;

interface Shot {
  name: string;
  dataUri: string | null;
}

export async function screenshots(report: Report, paths: AnalysisPaths): Promise<SafeHtml> {
  const shots = await loadShots(report, paths);
  const body =
    shots.length === 0
      ? html`<p class="empty">No screenshots.</p>`
      : html`<div class="shots">${shots.map((shot) =>
          shot.dataUri
            ? html`<figure><img src="${shot.dataUri}" alt="${shot.name}"><figcaption>${shot.name}</figcaption></figure>`
            : html`<figure><a href="../shots/${shot.name}">${shot.name}</a><figcaption>not embedded (size limit)</figcaption></figure>`,
        )}</div>`;
  return section('screenshots', 'Screenshots', body, shots.length);
}

async function loadShots(report: Report, paths: AnalysisPaths): Promise<Shot[]> {
  const folder = await realpath(paths.shots).catch(() => null);
  if (folder === null) return [];
  const shots: Shot[] = [];
  let budget = MAX_EMBEDDED_BYTES;
  for (const entry of report.screenshots ?? []) {
    const name = basename(entry.path ?? '');
    // Only our own shots folder is read: the page must never pull in other files of the host.
    const path = await realpath(entry.path ?? '').catch(() => null);
    if (!SHOT_NAME.test(name) || path === null || !path.startsWith(folder + sep)) continue;
    const size = (await stat(path)).size;
    if (size > budget) {
      shots.push({ name, dataUri: null });
      continue;
    }
    const data = await readFile(path);
    const type = imageType(data);
    if (!type) continue;
    budget -= size;
    shots.push({ name, dataUri: `data:${type};base64,${data.toString('base64')}` });
  }
  return shots;
}

function imageType(data: Buffer): string | null {
  if (data.subarray(0, 3).equals(Buffer.from([0xff, 0xd8, 0xff]))) return 'image/jpeg';
  if (data.subarray(0, 8).equals(Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]))) return 'image/png';
  return null;
}
