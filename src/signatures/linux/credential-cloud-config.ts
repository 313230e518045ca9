import { filesRead, RuleSignature } from '../rule-signature.js';
import type { SignatureInfo } from '../signature.js';

export class CredentialCloudConfig extends RuleSignature {
  readonly info: SignatureInfo = {
    name: 'credential_cloud_config',
    description: 'Reads files where cloud, container and developer tools keep access tokens and passwords',
    severity: 3,
    categories: ['credential_access'],
    ttp: ['T1552.001'],
  };

  constructor() {
    super({
      files: filesRead(/\/(\.aws\/(credentials|config)|\.docker\/config\.json|\.kube\/config|\.git-credentials|\.netrc|\.pgpass|\.my\.cnf|\.npmrc|\.pypirc|\.config\/gcloud\/(credentials\.db|access_tokens\.db|application_default_credentials\.json)|\.azure\/(accessTokens\.json|msal_token_cache\.json))$/),
    });
  }
}
