import { filesRead, RuleSignature } from '../rule-signature.js';
import type { SignatureInfo } from '../signature.js';

export class CryptoWalletAccess extends RuleSignature {
  readonly info: SignatureInfo = {
    name: 'crypto_wallet_access',
    description: 'Reads cryptocurrency wallets',
    severity: 3,
    categories: ['infostealer'],
    ttp: ['T1005'],
  };

  constructor() {
    super({
      files: filesRead(/(\/wallet\.dat$|\/\.(bitcoin|litecoin|dogecoin|dashcore|zcash)\/.*wallet|\/\.electrum\/wallets\/|\/\.ethereum\/keystore\/|\/\.config\/(Exodus|atomic|Electrum)\/|\/\.bitmonero\/|\/Monero\/wallets\/)/),
    });
  }
}
