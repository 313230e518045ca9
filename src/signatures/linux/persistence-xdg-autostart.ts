import { MODIFY } from '../helpers/file-access.js';
import { RuleSignature } from '../rule-signature.js';
import type { SignatureInfo } from '../signature.js';

export class PersistenceXdgAutostart extends RuleSignature {
  readonly info: SignatureInfo = {
    name: 'persistence_xdg_autostart',
    description: 'Adds a desktop autostart entry that runs at every graphical login',
    severity: 3,
    categories: ['persistence'],
    ttp: ['T1547.013'],
  };

  constructor() {
    super({
      files: [
        { path: /\/\.config\/autostart\/.+\.desktop$/, access: MODIFY },
        { path: /^\/etc\/xdg\/autostart\/.+\.desktop$/, access: MODIFY },
      ],
    });
  }
}
