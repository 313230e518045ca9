import type { WinCall } from '../helpers/windows-calls.js';
import { commandLineOf } from '../helpers/windows-commands.js';
import { filePathOf, newFilePathOf, opensForWriting } from '../helpers/windows-files.js';
import { canonicalRegistryPath, isRegistryValueWrite, registryPathOf } from '../helpers/windows-registry.js';
import type { SignatureContext } from '../signature.js';
import { WindowsCallSignature } from './windows-call-signature.js';

/** What a rule-described Windows signature looks for; every pattern is tested case-insensitively by its author. */
export interface WindowsRules {
  /** Registry values written (RegSetValueEx...), as `HKEY_...\key\value`; also the summary's regkey_written. */
  registryWrites?: readonly RegExp[];
  /** Command lines of programs started (CreateProcess*, ShellExecute*, WinExec); also the summary's command_line. */
  commandLines?: readonly RegExp[];
  /** Files opened for writing or moved/copied there (Windows paths); also the summary's file_written/file_created. */
  fileWrites?: readonly RegExp[];
}

/**
 * A Windows signature described by patterns over registry writes, command lines and written files: it marks
 * each call that fits, and at the end the entries of `behavior.summary` that fit (the summary also holds
 * what no traced call showed, e.g. registry writes read from the prefix's saved registry).
 */
export abstract class WindowsRuleSignature extends WindowsCallSignature {
  constructor(readonly rules: WindowsRules) {
    super();
  }

  protected onCall(event: WinCall, ctx: SignatureContext): void {
    if (this.#fits(event)) this.markEvent(event, ctx);
  }

  override onComplete(ctx: SignatureContext): void {
    const summary = ctx.report.behavior?.summary ?? {};
    const { registryWrites = [], commandLines = [], fileWrites = [] } = this.rules;
    for (const key of summary.regkey_written ?? []) if (any(registryWrites, canonicalRegistryPath(key))) this.markIoc('registry', key);
    for (const line of summary.command_line ?? []) if (any(commandLines, line)) this.markIoc('cmdline', line);
    for (const file of [...(summary.file_written ?? []), ...(summary.file_created ?? [])]) if (any(fileWrites, file)) this.markIoc('file', file);
  }

  #fits(event: WinCall): boolean {
    const { registryWrites = [], commandLines = [], fileWrites = [] } = this.rules;
    if (registryWrites.length > 0 && isRegistryValueWrite(event) && any(registryWrites, registryPathOf(event))) return true;
    if (commandLines.length > 0 && any(commandLines, commandLineOf(event))) return true;
    if (fileWrites.length === 0) return false;
    return (opensForWriting(event) && any(fileWrites, filePathOf(event))) || any(fileWrites, newFilePathOf(event));
  }
}

function any(patterns: readonly RegExp[], text: string | undefined): boolean {
  return text !== undefined && patterns.some((pattern) => pattern.test(text));
}
