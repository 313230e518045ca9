import type { BehaviorEvent, EventKind } from '../report/events.js';
import type { Report, SignatureMark, SignatureMatch } from '../report/report-types.js';
import type { AnalysisPaths } from '../storage/layout.js';
import { techniquesOf } from './attack.js';
import { callOf } from '../report/calls.js';
import type { ProcessTable } from './process-table.js';

/**
 * nestbox's severity scale. Cuckoo's community signatures use 1 to 3 (rarely more) with the same meaning for
 * the low end. Severity 3 is where the verdict turns (scoreOf makes it a score of 5 or more), so a signature
 * of severity 3 or more must never fire on benign software (test/corpus's benign controls check it):
 *  1 informational: common in benign software too, context for the analyst (discovery commands);
 *  2 suspicious: evasion checks, hiding, unusual but explainable behaviour, capabilities read from a file;
 *  3 malicious: persistence, defence tampering, self-deletion;
 *  4 clearly malicious: credential theft, download-and-execute, rootkit techniques;
 *  5 critical: interactive remote control (reverse shells) and destruction (ransomware).
 */
export type Severity = 1 | 2 | 3 | 4 | 5;

export interface SignatureInfo {
  /** Unique, snake_case, stable: clients search reports by it. */
  name: string;
  description: string;
  severity: Severity;
  categories: string[];
  families?: string[];
  references?: string[];
  /** MITRE ATT&CK technique ids (each must be in attack.ts). */
  ttp: string[];
}

export type EventOf<K extends EventKind> = Extract<BehaviorEvent, { kind: K }>;

export interface SignatureContext {
  readonly report: Report;
  readonly paths: AnalysisPaths;
  /** The processes as known at the current event; at completion, as at the end of the log. */
  readonly processes: ProcessTable;
  /** Position of an event among the events of its process in the log (Cuckoo's `cid`), if it was read from it. */
  callIndex(event: BehaviorEvent): number | undefined;
}

/** Cuckoo keeps the first 50 marks of a signature and counts the rest. */
export const MARK_LIMIT = 50;

/**
 * One behavioural signature. The engine makes a fresh instance per analysis, calls onEvent for every event of
 * the kinds listed in `kinds` (in log order), then onComplete once with the whole report. A signature matches
 * when it has marked something: every match says what made it match.
 */
export abstract class Signature<K extends EventKind = EventKind> {
  abstract readonly info: SignatureInfo;
  /** Event kinds this signature wants; it is never called for others. */
  readonly kinds: readonly K[] = [];

  readonly #marks: SignatureMark[] = [];
  readonly #markKeys = new Set<string>();

  onEvent(_event: EventOf<K>, _ctx: SignatureContext): void {}

  onComplete(_ctx: SignatureContext): void | Promise<void> {}

  get matched(): boolean {
    return this.#markKeys.size > 0;
  }

  /** Marks an event; the same call (same process, kind and arguments) is marked once. */
  protected markEvent(event: BehaviorEvent, ctx: SignatureContext): void {
    const call = callOf(event);
    const { bytes: _bytes, ...identity } = call.arguments;
    this.#add(`call\0${event.pid}\0${call.api}\0${JSON.stringify(identity)}`, {
      type: 'call',
      pid: event.pid,
      cid: ctx.callIndex(event) ?? null,
      call,
    });
  }

  protected markIoc(category: string, ioc: string, description: string | null = null): void {
    this.#add(`ioc\0${category}\0${ioc}`, { type: 'ioc', category, ioc, description });
  }

  protected mark(fields: Record<string, unknown>): void {
    this.#add(`generic\0${JSON.stringify(fields)}`, { ...fields, type: 'generic' });
  }

  result(): SignatureMatch {
    const { name, description, severity, categories, families = [], references = [], ttp } = this.info;
    return {
      name,
      description,
      severity,
      categories,
      families,
      references,
      ttp: techniquesOf(ttp),
      markcount: this.#markKeys.size,
      marks: [...this.#marks],
    };
  }

  #add(key: string, mark: SignatureMark): void {
    if (this.#markKeys.has(key)) return;
    this.#markKeys.add(key);
    if (this.#marks.length < MARK_LIMIT) this.#marks.push(mark);
  }
}

export type SignatureClass = new () => Signature<EventKind>;
