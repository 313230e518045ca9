import { MODIFY } from '../helpers/file-access.js';
import { RuleSignature } from '../rule-signature.js';
import type { SignatureInfo } from '../signature.js';

export class PersistenceRcScripts extends RuleSignature {
  readonly info: SignatureInfo = {
    name: 'persistence_rc_scripts',
    description: 'Adds commands to rc.local or init scripts that run at boot',
    severity: 3,
    categories: ['persistence'],
    ttp: ['T1037.004'],
  };

  constructor() {
    super({
      files: [{ path: /^\/etc\/(rc\.local|rc\.d\/.+|init\.d\/.+|rc[0-6S]\.d\/.+|init\/.+\.conf)$/, access: MODIFY }],
      programs: [
        { program: /^update-rc\.d$/, args: (args) => !args.includes('remove') },
        { program: /^chkconfig$/, args: (args) => args.some((arg) => arg === '--add' || arg === 'on') },
      ],
    });
  }
}
