import { WINE_DRIVE_C, WINDOWS_USER, windowsPathOf } from '../../report/windows-paths.js';
import { splitArguments } from './arguments.js';
import { definePackage } from './define.js';
import type { AnalysisPackage, PackageContext } from './types.js';

/** Where a Windows sample is put inside the machine: the user's Downloads folder, as a browser would. */
export const WINDOWS_SAMPLE_DIR = `${WINE_DRIVE_C}/users/${WINDOWS_USER}/Downloads`;
/** Wine's loaders: the 64-bit one runs PE32+ files, the 32-bit one PE32 files. */
export const WINE_LOADER_64 = '/usr/lib/wine/wine64';
export const WINE_LOADER_32 = '/usr/lib/wine/wine';
const RUNDLL32 = 'C:\\windows\\system32\\rundll32.exe';
/** What rundll32 calls when the task names no function and the DLL exports none (Cuckoo's dll package's default). */
const DEFAULT_FUNCTION = 'DllMain';

const spec = definePackage({
  name: 'wine',
  aliases: ['exe', 'dll', 'pe', 'windows', 'rundll32'],
  description: 'runs a Windows program (EXE, or DLL through rundll32 with option function=<export>) under Wine',
  // GUI programs draw their windows on the machine's display.
  needsDisplay: true,
  fileTypes: '^PE32\\+? executable',
  extensions: ['.exe', '.dll', '.scr', '.cpl'],
  command: ['wine', '{path}', '{arguments}'],
});

export function isDll({ fileType, path }: Pick<PackageContext, 'fileType' | 'path'>): boolean {
  return /\(DLL\)/.test(fileType ?? '') || path.toLowerCase().endsWith('.dll');
}

/**
 * The command that starts the sample under Wine: its own loader (32- or 64-bit, from libmagic's type), with
 * the sample's Windows path; a DLL through rundll32 with the `function` option, else its first export.
 */
export function wineCommand(context: PackageContext): string[] {
  const loader = /^PE32\+/.test(context.fileType ?? '') ? WINE_LOADER_64 : WINE_LOADER_32;
  const path = windowsPathOf(context.path) ?? context.path;
  if (!isDll(context)) return [loader, path, ...splitArguments(context.options.arguments)];
  const entry = context.options.function || context.firstExport || DEFAULT_FUNCTION;
  return [loader, RUNDLL32, `${path},${entry}`, ...splitArguments(context.options.arguments)];
}

export const winePackage: AnalysisPackage = {
  ...spec,
  runsUnderWine: true,
  command: wineCommand,
  fallbackCommand: () => undefined,
};
