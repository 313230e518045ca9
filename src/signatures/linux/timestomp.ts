import { RuleSignature } from '../rule-signature.js';
import type { SignatureInfo } from '../signature.js';

// touch -r ref, touch -t STAMP, touch -d DATE, and their long forms.
const SETS_TIME = (args: readonly string[]) => args.some((arg) => /^(-[acmh]*[rtd]|--reference|--date)/.test(arg));

export class Timestomp extends RuleSignature {
  readonly info: SignatureInfo = {
    name: 'timestomp',
    description: 'Sets file times to chosen values (timestomping) to blend its files in',
    severity: 2,
    categories: ['evasion'],
    ttp: ['T1070.006'],
  };

  constructor() {
    super({ programs: [{ program: /^touch$/, args: SETS_TIME }] });
  }
}
