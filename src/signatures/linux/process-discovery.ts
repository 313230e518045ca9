import { RuleSignature } from '../rule-signature.js';
import type { SignatureInfo } from '../signature.js';

export class ProcessDiscovery extends RuleSignature {
  readonly info: SignatureInfo = {
    name: 'process_discovery',
    description: 'Lists running processes',
    severity: 1,
    categories: ['discovery'],
    ttp: ['T1057'],
  };

  constructor() {
    super({ programs: [{ program: /^(ps|pgrep|pidof|top|htop|pstree)$/ }] });
  }
}
