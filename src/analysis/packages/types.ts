/**
 * Analysis packages: how a target is started inside a Linux machine. One file per package; `index.ts`
 * picks one from the task's `package` or, when empty, from the file's type and name.
 */
export interface PackageTarget {
  /** The file's name as submitted. */
  fileName: string;
  /** libmagic's description (`file -b`). */
  fileType: string;
}

export interface PackageContext {
  /** File tasks: where the sample is inside the machine. */
  path: string;
  /** URL tasks: the URL. */
  url: string;
  /** The task's options (`arguments=...`, `file=...`, `password=...`). */
  options: Record<string, string>;
  /** Passwords tried on encrypted archives when the task gives none (config archives.passwords). */
  passwords: string[];
}

export interface UnpackStep {
  /** Command run, untraced, inside the machine before the sample. */
  argv: string[];
  /** Folder (inside the machine) the files land in. */
  into: string;
}

export interface AnalysisPackage {
  readonly name: string;
  readonly aliases: readonly string[];
  readonly description: string;
  /** The sample cannot start before the virtual display is up (browsers, desktop autostart entries). */
  readonly needsDisplay?: boolean;
  /** Auto-selection: whether this package runs this file. */
  matches(target: PackageTarget): boolean;
  /** Archives: unpack first, then the file picked from what was unpacked is run by its own package. */
  unpack?(context: PackageContext): UnpackStep;
  /** The command line that starts the sample. */
  command(context: PackageContext): string[];
}
