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

/**
 * Chooses the file of an unpacked archive to run: the one named by the `file` option, else the first
 * (in path order) that a package other than the archive one recognises, else the first file.
 */
export async function pickUnpackedFile(root: string, into: string, wanted?: string): Promise<PickedFile> {
  const hostDir = await hostPathInMachine(root, into, { isFolder: true });
  const files = (await listFiles(hostDir)).sort();
  if (files.length === 0) throw invalidInput('the archive holds no file');
  const types = await fileTypes(files);
  const candidates = files.map((file, index) => {
    const name = relative(hostDir, file);
    const target = { fileName: name, fileType: types[index] ?? 'data' };
    return { name, path: `${into}/${name}`, fileType: target.fileType, package: packageForFile(target) };
  });
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
