import { readdir } from 'node:fs/promises';
import { join, relative } from 'node:path';
import { invalidInput } from '../../errors.js';
import { elfPackage } from '../../analysis/packages/elf.js';
import { packageForFile, type AnalysisPackage } from '../../analysis/packages/index.js';
import { fileTypes } from '../host/file-type.js';
import { hostPathInMachine } from './machine-path.js';

export interface PickedFile {
  /** Path inside the machine. */
  path: string;
  fileType: string;
  package: AnalysisPackage;
}

/** A file of an unpacked archive: its path below the folder it was unpacked into, and libmagic's type. */
export interface UnpackedCandidate {
  name: string;
  fileType: string;
}

/**
 * Chooses the file of an unpacked archive to run: the one named by the `file` option, else the first
 * (in path order) that a package other than the archive one recognises, else the first file.
 */
export async function pickUnpackedFile(root: string, into: string, wanted?: string): Promise<PickedFile> {
  const hostDir = await hostPathInMachine(root, into, { isFolder: true });
  const files = await listFiles(hostDir);
  const types = await fileTypes(files);
  const chosen = chooseUnpacked(files.map((file, index) => ({ name: relative(hostDir, file), fileType: types[index] ?? 'data' })), wanted);
  return { path: `${into}/${chosen.name}`, fileType: chosen.fileType, package: chosen.package };
}

/** The choice of pickUnpackedFile() among files already typed: also made on the host, before the machine (archive-preview.ts). */
export function chooseUnpacked(files: readonly UnpackedCandidate[], wanted?: string): UnpackedCandidate & { package: AnalysisPackage } {
  if (files.length === 0) throw invalidInput('the archive holds no file');
  const candidates = [...files]
    .sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0))
    .map((file) => ({ ...file, package: packageForFile({ fileName: file.name, fileType: file.fileType }) }));
  if (wanted) {
    const named = candidates.find((candidate) => candidate.name === wanted || candidate.name.endsWith(`/${wanted}`));
    if (!named) throw invalidInput(`the archive holds no file named ${JSON.stringify(wanted)}`, { context: { file: wanted } });
    return { ...named, package: runnable(named.package) };
  }
  const chosen = candidates.find((candidate) => candidate.package && !candidate.package.unpack) ?? candidates[0]!;
  return { ...chosen, package: runnable(chosen.package) };
}

const runnable = (found: AnalysisPackage | undefined) => (found && !found.unpack ? found : elfPackage);

async function listFiles(dir: string): Promise<string[]> {
  const files: string[] = [];
  for (const entry of await readdir(dir, { withFileTypes: true }).catch(() => [])) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) files.push(...(await listFiles(path)));
    else if (entry.isFile()) files.push(path);
  }
  return files;
}
