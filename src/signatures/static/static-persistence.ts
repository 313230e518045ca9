import { StaticRuleSignature } from '../static-rule-signature.js';
import type { SignatureInfo } from '../signature.js';

/** A Windows executable able to start itself again at logon or boot: Run keys, services. */
export class StaticPersistence extends StaticRuleSignature {
  readonly strength = 3;
  readonly info: SignatureInfo = {
    name: 'static_persistence',
    description: 'The executable carries the means to start again at every logon or boot (registry Run keys, services)',
    severity: 2,
    categories: ['persistence', 'static'],
    ttp: ['T1547.001', 'T1543.003'],
  };
}
