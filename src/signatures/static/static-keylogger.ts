import { StaticRuleSignature } from '../static-rule-signature.js';
import type { SignatureInfo } from '../signature.js';

/** A Windows executable able to record keystrokes: a low-level keyboard hook or a key-polling loop. */
export class StaticKeylogger extends StaticRuleSignature {
  readonly strength = 4;
  readonly info: SignatureInfo = {
    name: 'static_keylogger',
    description: 'The executable carries what a keylogger needs (a low-level keyboard hook, or key polling turned into text)',
    severity: 2,
    categories: ['keylogger', 'static'],
    ttp: ['T1056.001'],
  };
}
