import { RuleSignature } from '../rule-signature.js';
import type { SignatureInfo } from '../signature.js';

export class HistoryClearing extends RuleSignature {
  readonly info: SignatureInfo = {
    name: 'history_clearing',
    description: 'Clears shell history or turns its recording off',
    severity: 3,
    categories: ['evasion'],
    ttp: ['T1070.003'],
  };

  constructor() {
    super({
      files: [
        {
          path: /\/\.(bash_history|zsh_history|sh_history|ash_history|history|python_history|mysql_history|psql_history|node_repl_history|lesshst|viminfo)$/,
          access: ['delete', 'truncate', 'move', 'link'],
        },
      ],
      commandLines: [
        /\bhistory\s+-c\b/,
        /\bunset\s+([\w]+\s+)*HISTFILE\b/,
        /\bHISTFILE=(\/dev\/null|["']{2}|\s|$)/,
        /\bHIST(FILE)?SIZE=0\b/,
        /\bset\s+\+o\s+history\b/,
      ],
    });
  }
}
