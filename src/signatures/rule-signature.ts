import type { EventKind } from '../report/events.js';
import type { FileAccess } from './helpers/file-access.js';
import { Signature, type SignatureContext } from './signature.js';
import type { BehaviorEvent } from '../report/events.js';

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

/**
 * A signature described by rules: it marks every event touching a listed file the listed way, running a
 * listed program or having a command line that fits a pattern. The engine tests the rules of all rule
 * signatures together (rule-index.ts) and calls `ruleMatched` for the events that meet them. Signatures that
 * need more ask for more event kinds (`extraKinds`), which reach their onEvent as usual.
 */
export abstract class RuleSignature<Extra extends EventKind = never> extends Signature<Extra> {
  override readonly kinds: readonly Extra[];

  constructor(
    readonly rules: Rules,
    extraKinds: readonly Extra[] = [],
  ) {
    super();
    this.kinds = extraKinds;
  }

  /** An event met one of the rules. */
  ruleMatched(event: BehaviorEvent, ctx: SignatureContext): void {
    this.markEvent(event, ctx);
  }
}
