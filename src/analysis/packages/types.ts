/**
 * Analysis packages: how a target is started inside a machine. Each package is a `PackageSpec`, plain
 * data, so that the host (linux machines) and nestbox's analyzer in a qemu guest follow the very same
 * catalogue: the host sends it with every guest task. `define.ts` gives a spec its behaviour on the
 * host; `guest/analyzer/packages.py` gives it the same behaviour in the guest.
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
  passwords: readonly string[];
  /** libmagic's type of the file, where the machine knows it (the wine package picks its loader by it). */
  fileType?: string;
  /** A DLL's first exported name, for rundll32 when the task names no function. */
  firstExport?: string;
}

/**
 * A command line as data. A word that is exactly `{path}`, `{url}` or `{into}` is replaced by that
 * value; the word `{arguments}` by the words of the task's `arguments` option; the word `{passwords}` by
 * the archive passwords to try. Every other word is kept as it is.
 */
export type CommandTemplate = readonly string[];

export interface PackageSpec {
  readonly name: string;
  readonly aliases: readonly string[];
  readonly description: string;
  /** The sample cannot start before the virtual display is up (browsers, desktop autostart entries). */
  readonly needsDisplay?: boolean;
  /**
   * Auto-selection: a regular expression (matched case-insensitively, written in the syntax JavaScript
   * and Python share) on libmagic's description of the file...
   */
  readonly fileTypes?: string;
  /** ...or endings of the file's name (lower case). */
  readonly extensions?: readonly string[];
  /**
   * What starts the target. Runners start it as execvp does: a file the kernel cannot start itself
   * (text without a #! line) is given to /bin/sh.
   */
  readonly command?: CommandTemplate;
  /** What starts it instead when the command's program is not in the machine (a machine without a browser). */
  readonly fallback?: CommandTemplate;
  /** Archives: this command (run first, untraced) unpacks the target; the file picked from what it unpacked runs with its own package. */
  readonly unpack?: { readonly command: CommandTemplate; readonly into: string };
}

export interface UnpackStep {
  /** Command run, untraced, inside the machine before the sample. */
  argv: string[];
  /** Folder (inside the machine) the files land in. */
  into: string;
}

/** A spec with its behaviour on the host. */
export interface AnalysisPackage {
  readonly spec: PackageSpec;
  readonly name: string;
  readonly aliases: readonly string[];
  readonly description: string;
  readonly needsDisplay?: boolean;
  /** Runs a Windows program under Wine: the machine mounts Wine and starts Wine's own processes first. */
  readonly runsUnderWine?: boolean;
  /** Auto-selection: whether this package runs this file. */
  matches(target: PackageTarget): boolean;
  /**
   * Archives: unpack first, then the file picked from what was unpacked is run by its own package. Into
   * the spec's folder, or `into` (a Windows program's archive is unpacked beside it, as a user would).
   */
  unpack?(context: PackageContext, into?: string): UnpackStep;
  /** The command line that starts the sample. */
  command(context: PackageContext): string[];
  /** The command line that starts it when the command's program is missing; undefined when there is none. */
  fallbackCommand(context: PackageContext): string[] | undefined;
}
