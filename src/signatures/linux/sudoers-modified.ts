import { MODIFY } from '../helpers/file-access.js';
import { RuleSignature } from '../rule-signature.js';
import type { SignatureInfo } from '../signature.js';

export class SudoersModified extends RuleSignature {
  readonly info: SignatureInfo = {
    name: 'sudoers_modified',
    description: 'Changes sudo\'s rules (/etc/sudoers, /etc/sudoers.d)',
    severity: 4,
    categories: ['privilege_escalation', 'persistence'],
    ttp: ['T1548.003'],
  };

  constructor() {
    super({ files: [{ path: /^\/etc\/(sudoers|sudoers\.d\/.+)$/, access: MODIFY }] });
  }
}
