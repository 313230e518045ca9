import { RuleSignature } from '../rule-signature.js';
import type { SignatureInfo } from '../signature.js';

export class UserDiscovery extends RuleSignature {
  readonly info: SignatureInfo = {
    name: 'user_discovery',
    description: 'Finds out which user it runs as and who else uses the machine',
    severity: 1,
    categories: ['discovery'],
    ttp: ['T1033'],
  };

  constructor() {
    super({ programs: [{ program: /^(whoami|id|w|who|last|lastlog|users|groups|getent)$/ }] });
  }
}
