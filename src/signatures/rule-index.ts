import type { BehaviorEvent, EventKind } from '../report/events.js';
import { commandLine, invocationOf } from './helpers/command-line.js';
import { FILE_KINDS, fileTouches, type FileAccess } from './helpers/file-access.js';
import type { FileRule, ProgramRule, RuleSignature } from './rule-signature.js';
import type { EventOf } from './signature.js';

/**
 * The rules of every rule signature of an analysis, compiled together so that an event is tested once for
 * all of them rather than once per signature.
 *
 * File rules are grouped by the access they are about. Each group has prefilters: its path patterns joined
 * into one alternation (anchored ones apart from the others, so that the anchored alternation fails at the
 * first character and is never retried along the path). Most paths a program touches match no rule, and then
 * one or two prefilter tests replace dozens of pattern tests. Only a path that passes a prefilter is tested
 * against the group's patterns one by one, to learn which signatures it belongs to.
 */

interface Owned<R> {
  rule: R;
  owner: number;
}

interface FileGroup {
  prefilters: RegExp[];
  rules: Array<Owned<FileRule>>;
}

export class RuleIndex {
  /** Event kinds some rule is about. */
  readonly kinds = new Set<EventKind>();
  readonly #fileGroups = new Map<FileAccess, FileGroup>();
  readonly #programs: Array<Owned<ProgramRule>> = [];
  readonly #commandLines: Array<Owned<RegExp>> = [];
  /** The event each signature was last matched by, so that it is told once per event. */
  readonly #matchedAt: Array<BehaviorEvent | undefined>;

  constructor(private readonly signatures: readonly RuleSignature[]) {
    this.#matchedAt = signatures.map(() => undefined);
    const byAccess = new Map<FileAccess, Array<Owned<FileRule>>>();
    signatures.forEach((signature, owner) => {
      for (const rule of signature.rules.files ?? []) {
        for (const access of new Set(rule.access)) byAccess.set(access, [...(byAccess.get(access) ?? []), { rule, owner }]);
      }
      for (const rule of signature.rules.programs ?? []) this.#programs.push({ rule, owner });
      for (const rule of signature.rules.commandLines ?? []) this.#commandLines.push({ rule, owner });
    });
    for (const [access, rules] of byAccess) this.#fileGroups.set(access, { rules, prefilters: prefiltersOf(rules.map((owned) => owned.rule.path)) });
    if (byAccess.size > 0) for (const kind of FILE_KINDS) this.kinds.add(kind);
    if (this.#programs.length + this.#commandLines.length > 0) this.kinds.add('process.exec');
  }

  /** Calls `matched` once for each signature whose rules the event meets. */
  match(event: BehaviorEvent, matched: (signature: RuleSignature) => void): void {
    if (event.kind === 'process.exec') this.#matchExec(event, matched);
    else this.#matchFiles(event, matched);
  }

  #matchFiles(event: BehaviorEvent, matched: (signature: RuleSignature) => void): void {
    for (const touch of fileTouches(event)) {
      for (const access of touch.access) {
        const group = this.#fileGroups.get(access);
        if (!group || !passes(group.prefilters, touch.path)) continue;
        for (const { rule, owner } of group.rules) {
          if (this.#matchedAt[owner] !== event && rule.path.test(touch.path)) this.#tell(owner, event, matched);
        }
      }
    }
  }

  #matchExec(event: EventOf<'process.exec'>, matched: (signature: RuleSignature) => void): void {
    if (this.#programs.length > 0) {
      const { program, args } = invocationOf(event);
      for (const { rule, owner } of this.#programs) {
        if (this.#matchedAt[owner] !== event && rule.program.test(program) && (rule.args?.(args) ?? true)) this.#tell(owner, event, matched);
      }
    }
    if (this.#commandLines.length > 0) {
      const line = commandLine(event.argv);
      for (const { rule, owner } of this.#commandLines) {
        if (this.#matchedAt[owner] !== event && rule.test(line)) this.#tell(owner, event, matched);
      }
    }
  }

  #tell(owner: number, event: BehaviorEvent, matched: (signature: RuleSignature) => void): void {
    this.#matchedAt[owner] = event;
    matched(this.signatures[owner]!);
  }
}

function passes(prefilters: readonly RegExp[], path: string): boolean {
  for (const prefilter of prefilters) if (prefilter.test(path)) return true;
  return false;
}

/**
 * Alternations that match whenever one of the patterns does. Patterns with other flags than i, or with
 * back-references (which an alternation would renumber), stand as their own prefilter.
 */
export function prefiltersOf(patterns: readonly RegExp[]): RegExp[] {
  const joinable = new Map<string, string[]>();
  const alone: RegExp[] = [];
  for (const pattern of new Set(patterns)) {
    if (!/^i?$/.test(pattern.flags) || /\\[1-9]|\\k</.test(pattern.source)) {
      alone.push(new RegExp(pattern.source, pattern.flags.replace(/[gy]/g, '')));
      continue;
    }
    const key = `${pattern.flags}${pattern.source.startsWith('^') ? '^' : ''}`;
    joinable.set(key, [...(joinable.get(key) ?? []), pattern.source]);
  }
  const joined = [...joinable].flatMap(([key, sources]) => alternation(sources, key.replace('^', '')));
  // Anchored alternations first: they answer at the first character.
  return [...joined.sort((a, b) => Number(b.source.startsWith('(?:^')) - Number(a.source.startsWith('(?:^'))), ...alone];
}

/** One alternation of the sources; each on its own if they cannot be joined (a group name used twice). */
function alternation(sources: readonly string[], flags: string): RegExp[] {
  try {
    return [new RegExp(sources.map((source) => `(?:${source})`).join('|'), flags)];
  } catch {
    return sources.map((source) => new RegExp(source, flags));
  }
}
