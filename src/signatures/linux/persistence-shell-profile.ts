import { MODIFY } from '../helpers/file-access.js';
import { RuleSignature } from '../rule-signature.js';
import type { SignatureInfo } from '../signature.js';

export class PersistenceShellProfile extends RuleSignature {
  readonly info: SignatureInfo = {
    name: 'persistence_shell_profile',
    description: 'Modifies shell start-up files that run at every login',
    severity: 3,
    categories: ['persistence'],
    ttp: ['T1546.004'],
  };

  constructor() {
    super({
      files: [
        { path: /\/\.(bashrc|bash_profile|bash_login|bash_logout|profile|zshrc|zprofile|zshenv|zlogin|kshrc|cshrc|tcshrc)$/, access: MODIFY },
        { path: /^\/etc\/(profile|profile\.d\/.+|bash\.bashrc|bashrc|zsh\/.+|zshrc|environment)$/, access: MODIFY },
      ],
    });
  }
}
