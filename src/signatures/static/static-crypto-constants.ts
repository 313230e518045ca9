import { StaticRuleSignature } from '../static-rule-signature.js';
import type { SignatureInfo } from '../signature.js';

/** Constants of AES, SHA-256, RC4 or ChaCha/Salsa20 inside an executable: informational, as much software encrypts. */
export class StaticCryptoConstants extends StaticRuleSignature {
  readonly strength = 1;
  readonly info: SignatureInfo = {
    name: 'static_crypto_constants',
    description: 'The executable implements cryptographic algorithms itself (AES, SHA-256, RC4, ChaCha/Salsa20 constants)',
    severity: 1,
    categories: ['crypto', 'static'],
    ttp: ['T1573.001'],
  };
}
