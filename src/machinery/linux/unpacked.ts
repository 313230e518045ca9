import { readdir } from 'node:fs/promises';
import { join, relative } from 'node:path';
import type { AnalysisPackage } from '../../analysis/packages/index.js';
import { chooseUnpacked } from '../../analysis/packages/unpacked-choice.js';
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
  const files = await listFiles(hostDir);
  const types = await fileTypes(files);
  const chosen = chooseUnpacked(files.map((file, index) => ({ name: relative(hostDir, file), fileType: types[index] ?? 'data' })), wanted);
  return { path: `${into}/${chosen.name}`, fileType: chosen.fileType, package: chosen.package };
}

async function listFiles(dir: string): Promise<string[]> {
  const files: string[] = [];
  for (const entry of await readdir(dir, { withFileTypes: true }).catch(() => [])) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) files.push(...(await listFiles(path)));
    else if (entry.isFile()) files.push(path);
  }
  return files;
}
