import { filesRead, RuleSignature } from '../rule-signature.js';
import type { SignatureInfo } from '../signature.js';

export class CredentialSshKeys extends RuleSignature {
  readonly info: SignatureInfo = {
    name: 'credential_ssh_keys',
    description: 'Reads SSH private keys',
    severity: 4,
    categories: ['credential_access'],
    ttp: ['T1552.004'],
  };

  constructor() {
    super({
      files: filesRead(
        /\/\.ssh\/(id_(rsa|dsa|ecdsa|ed25519)(_sk)?|identity)$/,
        /^\/etc\/ssh\/ssh_host_\w+_key$/,
      ),
    });
  }
}
