import { filesRead, RuleSignature } from '../rule-signature.js';
import type { SignatureInfo } from '../signature.js';

const CHROMIUM_FAMILY = '(google-chrome|chromium|BraveSoftware\\/Brave-Browser|opera|vivaldi|microsoft-edge|yandex-browser)';

export class CredentialBrowser extends RuleSignature {
  readonly info: SignatureInfo = {
    name: 'credential_browser',
    description: 'Reads the saved passwords or cookies of web browsers',
    severity: 4,
    categories: ['credential_access', 'infostealer'],
    ttp: ['T1555.003'],
  };

  constructor() {
    super({
      files: filesRead(
        /\/\.mozilla\/firefox\/[^/]+\/(logins\.json|key[34]\.db|signons\.sqlite|cookies\.sqlite)$/,
        new RegExp(`\\/\\.config\\/${CHROMIUM_FAMILY}\\/([^/]+\\/)?(Login Data|Cookies|Web Data|Local State)$`),
      ),
    });
  }
}
