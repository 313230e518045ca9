import { RuleSignature } from '../rule-signature.js';
import type { SignatureInfo } from '../signature.js';

// `crontab -l` only lists and `crontab -r` removes; anything else installs or edits a table.
const INSTALLS = (args: readonly string[]) => !args.includes('-l') && !args.includes('-r');

export class PersistenceCrontabCommand extends RuleSignature {
  readonly info: SignatureInfo = {
    name: 'persistence_crontab_command',
    description: 'Installs or edits a cron table with the crontab command',
    severity: 3,
    categories: ['persistence'],
    ttp: ['T1053.003'],
  };

  constructor() {
    super({
      programs: [{ program: /^crontab$/, args: INSTALLS }],
      commandLines: [/\|\s*crontab\s+-(\s|$)/],
    });
  }
}
