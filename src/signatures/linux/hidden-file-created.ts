import { RuleSignature } from '../rule-signature.js';
import type { SignatureInfo } from '../signature.js';

// X servers and libraries create these dot-folders in /tmp; shadow-utils locks /etc with .pwd.lock.
const ORDINARY_DOT = '(X11-unix|ICE-unix|font-unix|XIM-unix|Test-unix|X\\d+-lock|pwd\\.lock)(\\/|$)';

export class HiddenFileCreated extends RuleSignature {
  readonly info: SignatureInfo = {
    name: 'hidden_file_created',
    description: 'Creates hidden files or folders in system or temporary folders',
    severity: 2,
    categories: ['stealth'],
    ttp: ['T1564.001'],
  };

  constructor() {
    super({
      files: [
        {
          path: new RegExp(`^\\/(tmp|var\\/tmp|dev\\/shm|run\\/shm|usr|lib|lib64|bin|sbin|etc|var\\/lib|opt|boot)\\/(.*\\/)?\\.(?!\\.?(\\/|$))(?!${ORDINARY_DOT})[^/]+`),
          access: ['create', 'mkdir'],
        },
        // "..." or blank names, made to be overlooked in listings, anywhere.
        { path: /\/(\.{3,}|\s+|\.+\s+)(\/|$)/, access: ['create', 'mkdir'] },
      ],
    });
  }
}
