import { RuleSignature } from '../rule-signature.js';
import type { SignatureInfo } from '../signature.js';

export class LogWiping extends RuleSignature {
  readonly info: SignatureInfo = {
    name: 'log_wiping',
    description: 'Deletes, empties or rewrites system logs and login records',
    severity: 4,
    categories: ['evasion'],
    ttp: ['T1070.002'],
  };

  constructor() {
    super({
      files: [
        { path: /^\/var\/log\/.+/, access: ['delete', 'truncate', 'move'] },
        { path: /^\/(var\/log\/(wtmp|btmp|lastlog|faillog)|(var\/)?run\/utmp)$/, access: ['write'] },
      ],
      programs: [{ program: /^journalctl$/, args: (args) => args.some((arg) => arg.startsWith('--vacuum')) }],
      commandLines: [/\b(shred|wipe|srm)\b.*\/var\/log\b/],
    });
  }
}
