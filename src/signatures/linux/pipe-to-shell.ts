import type { BehaviorEvent } from '../../report/events.js';
import { basename } from '../helpers/paths.js';
import { RuleSignature } from '../rule-signature.js';
import type { EventOf, SignatureContext, SignatureInfo } from '../signature.js';

const FETCHERS = '(curl|wget|fetch|tftp|lwp-download|lynx\\s+-source)';
const RUNNERS = '(sudo\\s+)?(\\S*\\/)?((ba|da|z|k|a)?sh|python[0-9.]*|perl|ruby|php)';

/** A fetcher that writes what it downloads to standard output (no -o/-O file), as `curl URL | sh` does. */
const FETCH_TO_STDOUT = /^(curl|wget)$/;
const FILE_OUTPUT = /^(-o|-O|--output|--output-document|--remote-name)$|^-[a-zA-Z]*[oO]$/;
const WGET_TO_STDOUT = /^(-O-|-qO-|--output-document=-)$/;
/** A shell or interpreter reading its program from standard input: no script and no -c. */
const STDIN_RUNNER = /^((ba|da|z|k|a)?sh|python[0-9.]*|perl|ruby|php)$/;

/** How close the fetcher and the runner must start to be the two ends of one pipeline. */
const PIPELINE_MS = 2_000;

/**
 * Runs downloaded content in a shell or interpreter. Seen in a command line (`sh -c 'curl URL | sh'`), or
 * in behaviour when a script runs the pipeline itself: its shell forks a fetcher writing to standard
 * output and, beside it, a shell or interpreter that reads its program from standard input.
 */
export class PipeToShell extends RuleSignature<'process.exec'> {
  readonly info: SignatureInfo = {
    name: 'pipe_to_shell',
    description: 'Runs downloaded content directly in a shell or interpreter (curl | sh)',
    severity: 4,
    categories: ['downloader'],
    ttp: ['T1105', 'T1059.004'],
  };

  /** Per parent, its latest fetcher and stdin runner children. */
  readonly #fetchers = new Map<number, BehaviorEvent>();
  readonly #runners = new Map<number, BehaviorEvent>();

  constructor() {
    super(
      {
        commandLines: [
          // curl -s http://x/i.sh | sh
          new RegExp(`\\b${FETCHERS}\\b[^|;&]*\\|\\s*${RUNNERS}\\b`),
          // sh -c "$(curl -fsSL http://x)", bash <(wget -qO- http://x), eval "$(curl ...)"
          new RegExp(`(\\b((ba|da|z|k|a)?sh)\\s+(-c\\s+)?["']?|\\beval\\s+["']?|\\bsource\\s+|\\.\\s+)(\\$\\(|<\\(|\`)\\s*${FETCHERS}\\b`),
        ],
      },
      ['process.exec'],
    );
  }

  override onEvent(event: EventOf<'process.exec'>, ctx: SignatureContext): void {
    if (event.ret < 0) return;
    const parent = ctx.processes.get(event.pid)?.ppid;
    if (parent === undefined) return;
    if (fetchesToStdout(event.argv)) this.#fetchers.set(parent, event);
    else if (readsProgramFromStdin(event.argv)) this.#runners.set(parent, event);
    else return;
    const fetcher = this.#fetchers.get(parent);
    const runner = this.#runners.get(parent);
    if (fetcher && runner && Math.abs(fetcher.ts - runner.ts) * 1000 <= PIPELINE_MS) {
      this.markEvent(fetcher, ctx);
      this.markEvent(runner, ctx);
    }
  }
}

function fetchesToStdout(argv: readonly string[]): boolean {
  const [program = '', ...args] = argv;
  const name = basename(program);
  if (!FETCH_TO_STDOUT.test(name) || !args.some((arg) => /^(https?|ftp):\/\//i.test(arg))) return false;
  if (name === 'wget') return args.some((arg) => WGET_TO_STDOUT.test(arg));
  return !args.some((arg) => FILE_OUTPUT.test(arg));
}

function readsProgramFromStdin(argv: readonly string[]): boolean {
  const [program = '', ...args] = argv;
  return STDIN_RUNNER.test(basename(program)) && args.every((arg) => arg.startsWith('-') && arg !== '-c');
}
