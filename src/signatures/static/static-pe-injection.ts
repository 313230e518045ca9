import { StaticRuleSignature } from '../static-rule-signature.js';
import type { SignatureInfo } from '../signature.js';

/** A Windows executable able to put code into another process and run it there (rules/yara/capabilities-pe.yar). */
export class StaticPeInjection extends StaticRuleSignature {
  readonly strength = 4;
  readonly info: SignatureInfo = {
    name: 'static_pe_injection',
    description: 'The Windows executable carries the API calls to inject code into other processes (remote thread, hollowing, APC)',
    severity: 2,
    categories: ['injection', 'static'],
    ttp: ['T1055', 'T1055.002', 'T1055.004', 'T1055.012'],
  };
}
