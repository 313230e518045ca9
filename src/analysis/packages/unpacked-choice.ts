import { invalidInput } from '../../errors.js';
import { elfPackage } from './elf.js';
import { PACKAGES, packageForFile } from './index.js';
import type { AnalysisPackage } from './types.js';

/** A file of an unpacked archive: its path below the folder it was unpacked into, and libmagic's type. */
export interface UnpackedCandidate {
  name: string;
  fileType: string;
}

/**
 * Chooses the file of an unpacked archive to run, among the packages the machine offers: the one named by
 * the `file` option, else the first (in path order) that a package other than the archive one recognises,
 * else the first file. The linux machine chooses so (pickUnpackedFile), a qemu guest's analyzer the same
 * way in Python (pick_unpacked), and the host before either machine is made (archive-preview.ts).
 */
export function chooseUnpacked(
  files: readonly UnpackedCandidate[],
  wanted?: string,
  offered: readonly AnalysisPackage[] = PACKAGES,
): UnpackedCandidate & { package: AnalysisPackage } {
  if (files.length === 0) throw invalidInput('the archive holds no file');
  const candidates = [...files]
    .sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0))
    .map((file) => ({ ...file, package: packageForFile({ fileName: file.name, fileType: file.fileType }, offered) }));
  if (wanted) {
    const named = candidates.find((candidate) => candidate.name === wanted || candidate.name.endsWith(`/${wanted}`));
    if (!named) throw invalidInput(`the archive holds no file named ${JSON.stringify(wanted)}`, { context: { file: wanted } });
    return { ...named, package: runnable(named.package) };
  }
  const chosen = candidates.find((candidate) => candidate.package && !candidate.package.unpack) ?? candidates[0]!;
  return { ...chosen, package: runnable(chosen.package) };
}

const runnable = (found: AnalysisPackage | undefined) => (found && !found.unpack ? found : elfPackage);
