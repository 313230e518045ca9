import { MODIFY } from '../helpers/file-access.js';
import { RuleSignature } from '../rule-signature.js';
import type { SignatureInfo } from '../signature.js';

export class AccountPasswdModified extends RuleSignature {
  readonly info: SignatureInfo = {
    name: 'account_passwd_modified',
    description: 'Changes the local account databases (/etc/passwd, /etc/shadow, /etc/group)',
    severity: 4,
    categories: ['persistence', 'privilege_escalation'],
    ttp: ['T1136.001'],
  };

  constructor() {
    super({ files: [{ path: /^\/etc\/(passwd|shadow|group|gshadow)$/, access: MODIFY }] });
  }
}
