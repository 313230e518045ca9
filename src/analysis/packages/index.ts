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

/**
 * What a machine without Wine offers (a qemu Linux guest): every package but those that run Windows programs
 * under Wine, which only the linux machinery brings into its machine.
 */
export const PACKAGES_WITHOUT_WINE: readonly AnalysisPackage[] = PACKAGES.filter((entry) => !entry.runsUnderWine);

/** Said when a machine without Wine is given a Windows program. */
export const WHERE_WINDOWS_PROGRAMS_RUN = 'Windows programs run under Wine on linux machines, or in the Windows guests of qemu machines of platform windows';

/** The catalogue as data, in auto-selection order: what a qemu guest's analyzer is given with each task. */
export function packageCatalogue(offered: readonly AnalysisPackage[] = PACKAGES): PackageSpec[] {
  return offered.map((entry) => entry.spec);
}

export function findPackage(name: string): AnalysisPackage | undefined {
  const wanted = name.trim().toLowerCase();
  return PACKAGES.find((candidate) => candidate.name === wanted || candidate.aliases.includes(wanted));
}

/** The package a file would be run with when the task names none (of those offered); undefined when nothing fits. */
export function packageForFile(target: PackageTarget, offered: readonly AnalysisPackage[] = PACKAGES): AnalysisPackage | undefined {
  return offered.find((candidate) => candidate.matches(target));
}

export interface ChoosePackageInput {
  /** The task's `package`; '' chooses. */
  requested: string;
  category: 'file' | 'url';
  target?: PackageTarget;
  reboot: boolean;
  /** The packages the machine offers: all of them unless it says otherwise (PACKAGES_WITHOUT_WINE). */
  offered?: readonly AnalysisPackage[];
}

/**
 * The package of a task: the one asked for, else reboot for reboot tasks, url for URL tasks, else the
 * first that matches the file, else `elf` (the kernel then decides, and text without a #! line goes to
 * /bin/sh, as a shell would do). A package the machine does not offer is refused with the reason, whether
 * asked for or matching the file, rather than the file run by something else.
 */
export function choosePackage({ requested, category, target, reboot, offered = PACKAGES }: ChoosePackageInput): AnalysisPackage {
  if (requested) {
    const found = findPackage(requested);
    if (!found) {
      throw invalidInput(`unknown analysis package "${requested}"; known: ${offered.map((p) => p.name).join(', ')}`, {
        context: { package: requested },
      });
    }
    return offeredOrRefused(found, offered);
  }
  if (reboot) return rebootPackage;
  if (category === 'url') return urlPackage;
  const matching = target && packageForFile(target);
  return matching ? offeredOrRefused(matching, offered) : elfPackage;
}

function offeredOrRefused(chosen: AnalysisPackage, offered: readonly AnalysisPackage[]): AnalysisPackage {
  if (offered.includes(chosen)) return chosen;
  const why = chosen.runsUnderWine ? `: ${WHERE_WINDOWS_PROGRAMS_RUN}; this machine has no Wine` : '';
  throw invalidInput(`this machine does not offer the analysis package "${chosen.name}"${why}`, { context: { package: chosen.name } });
}
