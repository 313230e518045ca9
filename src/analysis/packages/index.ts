import { invalidInput } from '../../errors.js';
import { archivePackage } from './archive.js';
import { elfPackage } from './elf.js';
import { nodePackage } from './node.js';
import { perlPackage } from './perl.js';
import { pythonPackage } from './python.js';
import { rebootPackage } from './reboot.js';
import { shellPackage } from './shell.js';
import type { AnalysisPackage, PackageSpec, PackageTarget } from './types.js';
import { urlPackage } from './url.js';
import { winePackage } from './wine.js';

export type { AnalysisPackage, PackageContext, PackageSpec, PackageTarget, UnpackStep } from './types.js';
export { expandTemplate, passwordsToTry } from './define.js';
export { UNPACK_DIR } from './archive.js';
export { WINDOWS_SAMPLE_DIR, isDll } from './wine.js';

/** In auto-selection order: the first package that matches a file runs it. */
export const PACKAGES: readonly AnalysisPackage[] = [
  elfPackage,
  winePackage,
  archivePackage,
  pythonPackage,
  perlPackage,
  nodePackage,
  shellPackage,
  urlPackage,
  rebootPackage,
];

/** The catalogue as data, in auto-selection order: what a qemu guest's analyzer is given with each task. */
export function packageCatalogue(): PackageSpec[] {
  return PACKAGES.map((entry) => entry.spec);
}

export function findPackage(name: string): AnalysisPackage | undefined {
  const wanted = name.trim().toLowerCase();
  return PACKAGES.find((candidate) => candidate.name === wanted || candidate.aliases.includes(wanted));
}

/** The package a file would be run with when the task names none; undefined when nothing fits. */
export function packageForFile(target: PackageTarget): AnalysisPackage | undefined {
  return PACKAGES.find((candidate) => candidate.matches(target));
}

export interface ChoosePackageInput {
  /** The task's `package`; '' chooses. */
  requested: string;
  category: 'file' | 'url';
  target?: PackageTarget;
  reboot: boolean;
}

/**
 * The package of a task: the one asked for, else reboot for reboot tasks, url for URL tasks, else the
 * first that matches the file, else `elf` (the kernel then decides, and text without a #! line goes to
 * /bin/sh, as a shell would do).
 */
export function choosePackage({ requested, category, target, reboot }: ChoosePackageInput): AnalysisPackage {
  if (requested) {
    const found = findPackage(requested);
    if (!found) {
      throw invalidInput(`unknown analysis package "${requested}"; known: ${PACKAGES.map((p) => p.name).join(', ')}`, {
        context: { package: requested },
      });
    }
    return found;
  }
  if (reboot) return rebootPackage;
  if (category === 'url') return urlPackage;
  return (target && packageForFile(target)) ?? elfPackage;
}
