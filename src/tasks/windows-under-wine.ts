import { findPackage, packageForFile, type PackageTarget } from '../analysis/packages/index.js';

/**
 * With no Windows machine configured, a task asking for platform windows runs on a linux machine under
 * Wine, which runs Windows programs (PE files) only. These say, at intake, why a task cannot run so.
 */
const WHY = 'no Windows machine is configured, so platform "windows" runs Windows programs (PE files, EXE or DLL) under Wine on the linux machines';

/**
 * Why the file cannot run under Wine, or undefined when it can: a Windows program, or an archive (the
 * file picked from it is known only once the machine has unpacked it). A package the task names decides;
 * an unknown one is left to the machine to refuse.
 */
export function fileRefusedUnderWine(requestedPackage: string, target: PackageTarget): string | undefined {
  const pkg = requestedPackage ? findPackage(requestedPackage) : packageForFile(target);
  if (requestedPackage && !pkg) return undefined;
  if (pkg?.runsUnderWine || pkg?.unpack) return undefined;
  const why = requestedPackage ? `the package "${requestedPackage}" asked for runs none` : `it is none (${target.fileType})`;
  return `${target.fileName} cannot run as platform "windows": ${WHY}, and ${why}`;
}

export const URL_REFUSED_UNDER_WINE = `A URL task cannot run as platform "windows": ${WHY}, which open no web pages`;
