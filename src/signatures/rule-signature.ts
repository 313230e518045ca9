import type { EventKind } from '../analysis/events.js';
import { FILE_KINDS, fileTouches, type FileAccess, type FileKind } from './helpers/file-access.js';
import { commandLine, invocationOf } from './helpers/command-line.js';
import { Signature, type EventOf, type SignatureContext } from './signature.js';

/** A file a signature looks for: which paths, touched how. */
export interface FileRule {
  path: RegExp;
  access: readonly FileAccess[];
}

/** Rules for reading any of these paths (checks of the machine, credential theft, discovery). */
export function filesRead(...paths: RegExp[]): FileRule[] {
  return paths.map((path) => ({ path, access: ['read'] }));
}

/** A program a signature looks for, by name (busybox applets count as their applet), optionally by arguments. */
export interface ProgramRule {
  program: RegExp;
  args?: (args: readonly string[]) => boolean;
}

export interface Rules {
  files?: readonly FileRule[];
  programs?: readonly ProgramRule[];
  /** Patterns searched in every command line (argv joined by spaces), for what only a shell string shows. */
  commandLines?: readonly RegExp[];
}

export type RuleKind = FileKind | 'process.exec';

/**
 * A signature described by rules: it marks every event touching a listed file the listed way, running a
 * listed program or having a command line that fits a pattern. Most signatures are only rules; those that
 * need more ask for more event kinds (`extraKinds`), override onEvent and call super for the rest.
 */
export abstract class RuleSignature<Extra extends EventKind = never> extends Signature<RuleKind | Extra> {
  override readonly kinds: readonly (RuleKind | Extra)[];
  /** The file rules that apply to each kind of access, so that a read is tested only against read rules. */
  readonly #rulesByAccess = new Map<FileAccess, FileRule[]>();

  constructor(
    protected readonly rules: Rules,
    extraKinds: readonly Extra[] = [],
  ) {
    super();
    const wantsExec = (rules.programs?.length ?? 0) + (rules.commandLines?.length ?? 0) > 0;
    this.kinds = [...(rules.files?.length ? FILE_KINDS : []), ...(wantsExec ? (['process.exec'] as const) : []), ...extraKinds];
    for (const rule of rules.files ?? []) {
      for (const access of rule.access) this.#rulesByAccess.set(access, [...(this.#rulesByAccess.get(access) ?? []), rule]);
    }
  }

  override onEvent(event: EventOf<RuleKind | Extra>, ctx: SignatureContext): void {
    if (event.kind === 'process.exec') {
      if (this.execMatches(event as EventOf<'process.exec'>)) this.markEvent(event, ctx);
    } else if (isFileEvent(event) && this.fileMatches(event)) {
      this.markEvent(event, ctx);
    }
  }

  protected execMatches(event: EventOf<'process.exec'>): boolean {
    const { program, args } = invocationOf(event);
    if (this.rules.programs?.some((rule) => rule.program.test(program) && (rule.args?.(args) ?? true))) return true;
    const line = commandLine(event.argv);
    return this.rules.commandLines?.some((pattern) => pattern.test(line)) ?? false;
  }

  protected fileMatches(event: EventOf<FileKind>): boolean {
    for (const touch of fileTouches(event)) {
      for (const access of touch.access) {
        if (this.#rulesByAccess.get(access)?.some((rule) => rule.path.test(touch.path))) return true;
      }
    }
    return false;
  }
}

function isFileEvent(event: { kind: EventKind }): event is EventOf<FileKind> {
  return (FILE_KINDS as readonly string[]).includes(event.kind);
}
