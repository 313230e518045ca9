import { lstat, readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describeFiles } from '../fileinfo.js';
import type { DroppedFile, FileInfo } from '../../report/report-types.js';
import type { ProcessingModule } from '../types.js';
import { windowsPathOf } from '../../report/windows-paths.js';

/** Dropped files described per report; the engine already caps how many it collects. */
const MAX_DROPPED = 1000;

interface FilesJsonEntry {
  path: string;
  filepath: string | null;
  pids: number[];
  /** Set when the stored file is only the first bytes of the machine's file. */
  truncation?: Truncation;
}

/** The report's marks of a file kept in part; its size and hashes stay those of the stored bytes. */
interface Truncation {
  truncated: true;
  original_size: number;
  note: string;
}

/**
 * Files the sample created or changed, from files/ and the files.json index (one JSON object per line:
 * path under the analysis folder, the machine path, the pids). Index lines pointing outside files/ or
 * at anything but a regular file are ignored; files without an index line are listed with their name.
 * A file the machine kept only the first bytes of says so (truncated, original_size, note). Files kept
 * without content have no file to describe: they stay in files.json and the task's warnings.
 */
export const droppedModule: ProcessingModule<'dropped'> = {
  key: 'dropped',
  async run(input) {
    const names = await readdir(input.paths.files).catch(() => [] as string[]);
    if (names.length === 0) return undefined;
    const index = await readIndex(input.paths.filesJson);
    const chosen: Chosen[] = [];
    for (const name of names.sort()) {
      if (chosen.length >= MAX_DROPPED) break;
      const stats = await lstat(join(input.paths.files, name)).catch(() => undefined);
      if (!stats?.isFile()) continue;
      chosen.push({ name, entry: index.get(name) });
    }
    if (chosen.length === 0) return undefined;
    const described = await describeFiles(
      chosen.map((file) => ({ path: join(input.paths.files, file.name) })),
      input.tools,
    );
    return described.map((info, i) => droppedFile(info, chosen[i]!));
  },
};

interface Chosen {
  /** Name inside files/. */
  name: string;
  entry: FilesJsonEntry | undefined;
}

function droppedFile(info: FileInfo, { name, entry }: Chosen): DroppedFile {
  const filepath = entry?.filepath ?? name.replace(/^[0-9a-f]{16}_/, '');
  // A file a Windows program wrote under Wine is named the way the program saw it.
  return { ...info, filepath: windowsPathOf(filepath) ?? filepath, pids: entry?.pids ?? [], ...entry?.truncation };
}

/** files.json entries by file name inside files/. */
async function readIndex(path: string): Promise<Map<string, FilesJsonEntry>> {
  const index = new Map<string, FilesJsonEntry>();
  const text = await readFile(path, 'utf8').catch(() => '');
  for (const line of text.split('\n')) {
    if (!line.trim()) continue;
    let entry: Partial<RawEntry>;
    try {
      entry = JSON.parse(line) as Partial<RawEntry>;
    } catch {
      continue;
    }
    const match = typeof entry.path === 'string' ? /^files\/([^/]+)$/.exec(entry.path) : null;
    if (!match || match[1] === '.' || match[1] === '..') continue;
    index.set(match[1]!, {
      path: entry.path!,
      filepath: typeof entry.filepath === 'string' ? entry.filepath : null,
      pids: Array.isArray(entry.pids) ? entry.pids.filter((pid): pid is number => Number.isInteger(pid)) : [],
      ...truncationOf(entry),
    });
  }
  return index;
}

/** A files.json line as the machineries write it (machinery/dropped/entry.ts). */
interface RawEntry {
  path: string;
  filepath: string | null;
  pids: number[];
  size: number;
  truncated: boolean;
  note: string;
}

function truncationOf(entry: Partial<RawEntry>): { truncation?: Truncation } {
  if (entry.truncated !== true || !Number.isSafeInteger(entry.size)) return {};
  const note = typeof entry.note === 'string' ? entry.note : 'truncated: only the first bytes of the file were kept';
  return { truncation: { truncated: true, original_size: entry.size!, note } };
}
