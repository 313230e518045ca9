import { MODIFY } from '../helpers/file-access.js';
import { RuleSignature } from '../rule-signature.js';
import type { SignatureInfo } from '../signature.js';

export class PersistenceSshAuthorizedKeys extends RuleSignature {
  readonly info: SignatureInfo = {
    name: 'persistence_ssh_authorized_keys',
    description: 'Adds SSH authorized keys or changes the SSH server configuration to keep remote access',
    severity: 4,
    categories: ['persistence', 'backdoor'],
    ttp: ['T1098.004'],
  };

  constructor() {
    super({
      files: [
        { path: /\/\.ssh\/authorized_keys2?$/, access: MODIFY },
        { path: /^\/etc\/ssh\/(sshd_config(\.d\/.+)?|authorized_keys.*)$/, access: MODIFY },
      ],
    });
  }
}
