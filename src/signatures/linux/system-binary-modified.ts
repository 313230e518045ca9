import { MODIFY } from '../helpers/file-access.js';
import { RuleSignature } from '../rule-signature.js';
import type { SignatureInfo } from '../signature.js';

export class SystemBinaryModified extends RuleSignature {
  readonly info: SignatureInfo = {
    name: 'system_binary_modified',
    description: 'Replaces or changes system programs or libraries (trojanised ps, netstat, libc...)',
    severity: 4,
    categories: ['rootkit', 'persistence'],
    ttp: ['T1554', 'T1014'],
  };

  constructor() {
    super({
      files: [
        // /usr/local is where an administrator installs their own programs: a new link there is an install, not a trojan.
        { path: /^\/(usr\/)?s?bin\/[^/]+$/, access: MODIFY },
        { path: /^\/(usr\/)?lib(32|64|x32)?\/([^/]+\/)?[^/]+\.so(\.[0-9.]+)?$/, access: MODIFY },
      ],
    });
  }
}
