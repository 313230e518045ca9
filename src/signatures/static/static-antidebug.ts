import { StaticRuleSignature } from '../static-rule-signature.js';
import type { SignatureInfo } from '../signature.js';

/** An executable built to notice a debugger: several Windows checks, or ptrace(PTRACE_TRACEME) on Linux. */
export class StaticAntidebug extends StaticRuleSignature {
  readonly strength = 2;
  readonly info: SignatureInfo = {
    name: 'static_antidebug',
    description: 'The executable carries checks for an attached debugger',
    severity: 2,
    categories: ['anti-debug', 'static'],
    ttp: ['T1622'],
  };
}
