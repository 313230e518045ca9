import { existsSync } from 'node:fs';
import { basename } from 'node:path';
import { describeFile } from '../fileinfo.js';
import type { FileInfo, TargetSection } from '../../report/report-types.js';
import type { ProcessingInput, ProcessingModule } from '../types.js';

/** Cuckoo's targetinfo: the URL, or the file's facts (hashes, type, YARA matches, embedded URLs). */
export const targetModule: ProcessingModule<'target'> = {
  key: 'target',
  async run(input) {
    const { task } = input;
    if (task.category === 'url') return { category: 'url', url: task.target } satisfies TargetSection;
    const name = basename(task.target);
    if (input.binaryPath === undefined || !existsSync(input.binaryPath)) return { category: 'file', file: missingFile(input, name) };
    const file = await describeFile(input.binaryPath, input.tools, { name, shownPath: input.binaryPath });
    return { category: 'file', file };
  },
};

/** The binary is gone (deleted after analysis): Cuckoo then shows path null and no matches; the hashes are still known. */
function missingFile(input: ProcessingInput, name: string): FileInfo {
  const sample = input.sample;
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
