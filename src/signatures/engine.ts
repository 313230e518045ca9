import { join } from 'node:path';
import { EVENTS_FILE, type BehaviorEvent } from '../report/events.js';
import { callIndexOf, type EventFold, foldOne } from '../report/event-log.js';
import { behaviorStreams } from '../report/behavior-streams.js';
import type { Report, SignatureMatch } from '../report/report-types.js';
import type { AnalysisPaths } from '../storage/layout.js';
import { ProcessTable } from './process-table.js';
import { RuleIndex } from './rule-index.js';
import { RuleSignature } from './rule-signature.js';
import type { Signature, SignatureClass, SignatureContext } from './signature.js';

export interface EngineOptions {
  /** Called when a signature throws; the signature is left out of the rest of this analysis. */
  onError?: (signature: string, error: unknown) => void;
}

/**
 * The signatures of one analysis. Its `fold` takes the behaviour log's events (in the processing pipeline's
 * single pass over the log, or in runSignatureClasses' own), giving each event only to the signatures that
 * asked for its kind and testing the rules of all rule signatures at once; then `complete` calls every
 * signature's onComplete with the finished report.
 */
export class SignatureRun {
  readonly fold: EventFold<void>;
  readonly #signatures: Signature[];
  readonly #failed = new Set<Signature>();
  readonly #processes = new ProcessTable();
  readonly #ctx: SignatureContext;
  #byKind = new Map<string, Signature[]>();
  #rules = new RuleIndex([]);
  #report: Report | undefined;
  /** An error of the engine itself while reading, thrown at completion. */
  #broken: unknown;

  constructor(
    classes: readonly SignatureClass[],
    paths: AnalysisPaths,
    private readonly options: EngineOptions = {},
  ) {
    this.#signatures = classes.map((SignatureType) => new SignatureType());
    this.#index();
    const completedReport = (): Report => {
      if (!this.#report) throw new Error('the report is only there at completion, not while the log is read');
      return this.#report;
    };
    this.#ctx = {
      paths,
      processes: this.#processes,
      get report(): Report {
        return completedReport();
      },
      callIndex: callIndexOf,
    };
    this.fold = {
      event: (event) => {
        try {
          this.#event(event);
        } catch (error) {
          this.#broken ??= error;
        }
      },
      result: () => undefined,
    };
  }

  /** Calls every signature's onComplete with the report; the matches by ascending severity, as Cuckoo orders them. */
  async complete(report: Report): Promise<SignatureMatch[]> {
    if (this.#broken !== undefined) throw this.#broken;
    this.#report = report;
    for (const signature of this.#active()) {
      try {
        await signature.onComplete(this.#ctx);
      } catch (error) {
        this.#fail(signature, error);
      }
    }
    return this.#active()
      .filter((signature) => signature.matched)
      .map((signature) => signature.result())
      .sort((a, b) => a.severity - b.severity || a.name.localeCompare(b.name));
  }

  #event(event: BehaviorEvent): void {
    if (!isSignatureEvent(event)) return;
    this.#processes.observe(event);
    const wanting = this.#byKind.get(event.kind);
    if (wanting) {
      for (const signature of wanting) this.#deliver(signature, event);
    }
    if (this.#rules.kinds.has(event.kind)) this.#rules.match(event, (signature) => this.#ruleMatched(signature, event));
  }

  // A signature that fails is taken out of the dispatch table at once, so no check is needed here.
  #deliver(signature: Signature, event: BehaviorEvent): void {
    try {
      signature.onEvent(event as never, this.#ctx);
    } catch (error) {
      this.#fail(signature, error);
    }
  }

  #ruleMatched(signature: RuleSignature, event: BehaviorEvent): void {
    if (this.#failed.has(signature)) return;
    try {
      signature.ruleMatched(event, this.#ctx);
    } catch (error) {
      this.#fail(signature, error);
    }
  }

  #fail(signature: Signature, error: unknown): void {
    this.#failed.add(signature);
    this.options.onError?.(signature.info.name, error);
    this.#index();
  }

  #active(): Signature[] {
    return this.#signatures.filter((signature) => !this.#failed.has(signature));
  }

  /** Who wants which event: by kind for onEvent, and the rules of the rule signatures. */
  #index(): void {
    const active = this.#active();
    this.#byKind = new Map();
    for (const signature of active) {
      for (const kind of new Set(signature.kinds)) this.#byKind.set(kind, [...(this.#byKind.get(kind) ?? []), signature]);
    }
    this.#rules = new RuleIndex(active.filter((signature): signature is RuleSignature => signature instanceof RuleSignature));
  }
}

/**
 * Runs signatures over one analysis on their own: streams `logs/events.jsonl` once (a missing log gives no
 * events), then completes with the report. Returns the matches sorted by ascending severity.
 */
export async function runSignatureClasses(
  classes: readonly SignatureClass[],
  report: Report,
  paths: AnalysisPaths,
  options: EngineOptions = {},
): Promise<SignatureMatch[]> {
  const run = new SignatureRun(classes, paths, options);
  await foldOne(join(paths.dir, EVENTS_FILE), run.fold, await behaviorStreams(paths));
  return run.complete(report);
}

type Check = (event: Record<string, unknown>) => boolean;

const isString = (value: unknown) => typeof value === 'string';
const isNumber = (value: unknown) => typeof value === 'number';
const isStringArray = (value: unknown) => Array.isArray(value) && value.every(isString);
const isNumberArray = (value: unknown) => Array.isArray(value) && value.every(isNumber);
const hasPath: Check = (event) => isString(event.path);
const hasEndpoint: Check = (event) => isString(event.family) && isString(event.address) && isNumber(event.port);
const hasFromTo: Check = (event) => isString(event.from) && isString(event.to);

/** The fields of each kind that signatures read without checking; an event lacking them is skipped as malformed. */
const CHECKS = new Map<string, Check>([
  ['process.fork', (event) => isNumber(event.child)],
  ['process.exec', (event) => isString(event.path) && isStringArray(event.argv)],
  ['process.rename', (event) => isString(event.name)],
  ['process.ptrace', (event) => isNumber(event.request) && isNumber(event.target)],
  ['process.setid', (event) => isString(event.call) && isNumberArray(event.ids)],
  ['process.kill', (event) => isNumber(event.target) && isNumber(event.signal)],
  ['file.open', (event) => isString(event.path) && isNumber(event.flags)],
  ['file.write', hasPath],
  ['file.rename', hasFromTo],
  ['file.delete', hasPath],
  ['file.mkdir', hasPath],
  ['file.rmdir', hasPath],
  ['file.chmod', (event) => isString(event.path) && isNumber(event.mode)],
  ['file.chown', hasPath],
  ['file.link', hasFromTo],
  ['net.connect', hasEndpoint],
  ['net.bind', hasEndpoint],
  ['net.accept', (event) => isNumber(event.fd) && isNumber(event.ret)],
  ['memory.memfd', (event) => isString(event.name)],
  ['memory.exec_map', (event) => isString(event.call)],
  ['module.load', (event) => isString(event.call)],
  ['file.dup', (event) => isNumber(event.oldfd) && isNumber(event.newfd) && isString(event.object)],
  ['process.sleep', (event) => isNumber(event.seconds)],
  ['system.call', (event) => typeof event.args === 'object' && event.args !== null && isNumber(event.ret)],
  ['net.socket', (event) => isString(event.family) && isNumber(event.type) && isNumber(event.ret)],
  ['net.send', (event) => isNumber(event.fd) && (event.payload === undefined || isString(event.payload))],
  ['win.call', (event) => typeof event.args === 'object' && event.args !== null && isNumber(event.ret) && isNumber(event.winpid)],
]);

/** Whether an event (kind and pid already checked by the reader) has every field signatures rely on. */
function isSignatureEvent(event: BehaviorEvent): boolean {
  if (typeof event.ts !== 'number' || typeof event.comm !== 'string') return false;
  return CHECKS.get(event.kind)?.(event as unknown as Record<string, unknown>) ?? true;
}
