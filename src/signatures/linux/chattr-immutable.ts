import { RuleSignature } from '../rule-signature.js';
import type { SignatureInfo } from '../signature.js';

export class ChattrImmutable extends RuleSignature {
  readonly info: SignatureInfo = {
    name: 'chattr_immutable',
    description: 'Makes files immutable or append-only (chattr +i/+a) so that they cannot be removed',
    severity: 3,
    categories: ['persistence', 'evasion'],
    ttp: ['T1222.002'],
  };

  constructor() {
    super({ programs: [{ program: /^chattr$/, args: (args) => args.some((arg) => /^\+[a-zA-Z]*[ia]/.test(arg)) }] });
  }
}
