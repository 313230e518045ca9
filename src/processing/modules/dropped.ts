import { lstat, readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describeFiles } from '../fileinfo.js';
import type { DroppedFile } from '../../report/report-types.js';
import type { ProcessingModule } from '../types.js';

/** Dropped files described per report; the engine already caps how many it collects. */
const MAX_DROPPED = 1000;

interface FilesJsonEntry {
  path: string;
  filepath: string | null;
  pids: number[];
}

/**
 * Files the sample created or changed, from files/ and the files.json index (one JSON object per line:
 * path under the analysis folder, the machine path, the pids). Index lines pointing outside files/ or
 * at anything but a regular file are ignored; files without an index line are listed with their name.
 */
export const droppedModule: ProcessingModule<'dropped'> = {
  key: 'dropped',
  async run(input) {
    const names = await readdir(input.paths.files).catch(() => [] as string[]);
    if (names.length === 0) return undefined;
    const index = await readIndex(input.paths.filesJson);
    const chosen: Array<{ name: string; filepath: string; pids: number[] }> = [];
    for (const name of names.sort()) {
      if (chosen.length >= MAX_DROPPED) break;
      const stats = await lstat(join(input.paths.files, name)).catch(() => undefined);
      if (!stats?.isFile()) continue;
      const entry = index.get(name);
      chosen.push({ name, filepath: entry?.filepath ?? name.replace(/^[0-9a-f]{16}_/, ''), pids: entry?.pids ?? [] });
    }
    if (chosen.length === 0) return undefined;
    const described = await describeFiles(
      chosen.map((file) => ({ path: join(input.paths.files, file.name) })),
      input.tools,
    );
    return described.map((info, i): DroppedFile => ({ ...info, filepath: chosen[i]!.filepath, pids: chosen[i]!.pids }));
  },
};

/** files.json entries by file name inside files/. */
async function readIndex(path: string): Promise<Map<string, FilesJsonEntry>> {
  const index = new Map<string, FilesJsonEntry>();
  const text = await readFile(path, 'utf8').catch(() => '');
  for (const line of text.split('\n')) {
    if (!line.trim()) continue;
    let entry: Partial<FilesJsonEntry>;
    try {
      entry = JSON.parse(line) as Partial<FilesJsonEntry>;
    } catch {
      continue;
    }
    const match = typeof entry.path === 'string' ? /^files\/([^/]+)$/.exec(entry.path) : null;
    if (!match || match[1] === '.' || match[1] === '..') continue;
    index.set(match[1]!, {
      path: entry.path!,
      filepath: typeof entry.filepath === 'string' ? entry.filepath : null,
      pids: Array.isArray(entry.pids) ? entry.pids.filter((pid): pid is number => Number.isInteger(pid)) : [],
    });
  }
  return index;
}
