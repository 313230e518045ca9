import { filesRead, RuleSignature } from '../rule-signature.js';
import type { SignatureInfo } from '../signature.js';

export class CredentialShadow extends RuleSignature {
  readonly info: SignatureInfo = {
    name: 'credential_shadow',
    description: 'Reads the password hash database (/etc/shadow)',
    severity: 4,
    categories: ['credential_access'],
    ttp: ['T1003.008'],
  };

  constructor() {
    super({
      files: filesRead(/^\/etc\/(shadow|gshadow|shadow-|gshadow-|security\/opasswd|master\.passwd)$/),
      programs: [{ program: /^unshadow$/ }],
    });
  }
}
