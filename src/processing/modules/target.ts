import { existsSync } from 'node:fs';
import { basename } from 'node:path';
import type { SampleRow } from '../../db/schema.js';
import { describeFiles } from '../fileinfo.js';
import type { FileInfo, TargetSection } from '../../report/report-types.js';
import type { ProcessingModule, ProcessingTools } from '../types.js';

/**
 * Cuckoo's targetinfo: the URL, or the file's facts (hashes, type, YARA matches, embedded URLs). A file
 * unpacked from a submitted archive also gets the archive's facts and its path inside the archive.
 */
export const targetModule: ProcessingModule<'target'> = {
  key: 'target',
  async run(input) {
    const { task } = input;
    if (task.category === 'url') return { category: 'url', url: task.target } satisfies TargetSection;
    const sample = { name: basename(task.target), path: input.binaryPath, row: input.sample };
    const archive = task.category === 'archive' ? input.archive : undefined;
    if (!archive) return { category: 'file', file: (await describe([sample], input.tools))[0]! };
    const [file, archiveInfo] = await describe([sample, { name: archive.name, path: archive.binaryPath, row: archive.sample }], input.tools);
    return {
      category: 'archive',
      file: file!,
      filename: archive.member,
      archive: archiveInfo!,
      human: `${archive.member} @ ${archive.name}`,
    };
  },
};

interface Described {
  name: string;
  /** The stored binary; undefined when gone. */
  path: string | undefined;
  row: SampleRow | undefined;
}

/** FileInfo of stored files, with one YARA run for all; a file gone from storage is shown from its sample row. */
async function describe(files: readonly Described[], tools: ProcessingTools): Promise<FileInfo[]> {
  const present = files.filter((file): file is Described & { path: string } => file.path !== undefined && existsSync(file.path));
  const infos = await describeFiles(present.map((file) => ({ path: file.path, name: file.name, shownPath: file.path })), tools);
  return files.map((file) => {
    const index = present.indexOf(file as Described & { path: string });
    return index >= 0 ? infos[index]! : missingFile(file.row, file.name);
  });
}

/** The binary is gone (deleted after analysis): Cuckoo then shows path null and no matches; the hashes are still known. */
function missingFile(sample: SampleRow | undefined, name: string): FileInfo {
  return {
    name,
    path: null,
    size: sample?.file_size ?? 0,
    crc32: sample?.crc32 ?? '',
    md5: sample?.md5 ?? '',
    sha1: sample?.sha1 ?? '',
    sha256: sample?.sha256 ?? '',
    sha512: sample?.sha512 ?? '',
    ssdeep: sample?.ssdeep ?? null,
    type: sample?.file_type ?? '',
    yara: [],
    urls: [],
  };
}
