import { RuleSignature } from '../rule-signature.js';
import type { SignatureInfo } from '../signature.js';

export class AccountCreatedCommand extends RuleSignature {
  readonly info: SignatureInfo = {
    name: 'account_created_command',
    description: 'Creates or changes user accounts or passwords with account tools',
    severity: 3,
    categories: ['persistence'],
    ttp: ['T1136.001'],
  };

  constructor() {
    super({ programs: [{ program: /^(useradd|adduser|usermod|chpasswd|newusers|passwd|groupadd|gpasswd)$/ }] });
  }
}
