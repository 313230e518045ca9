import { MODIFY } from '../helpers/file-access.js';
import { RuleSignature } from '../rule-signature.js';
import type { SignatureInfo } from '../signature.js';

export class RootkitLdPreload extends RuleSignature {
  readonly info: SignatureInfo = {
    name: 'rootkit_ld_preload',
    description: 'Writes /etc/ld.so.preload so that its library is loaded into every program (userland rootkit)',
    severity: 4,
    categories: ['rootkit', 'persistence'],
    ttp: ['T1574.006', 'T1014'],
  };

  constructor() {
    super({ files: [{ path: /^\/etc\/ld\.so\.preload$/, access: MODIFY }] });
  }
}
