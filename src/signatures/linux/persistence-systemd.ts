import { MODIFY } from '../helpers/file-access.js';
import { RuleSignature } from '../rule-signature.js';
import type { SignatureInfo } from '../signature.js';

export class PersistenceSystemd extends RuleSignature {
  readonly info: SignatureInfo = {
    name: 'persistence_systemd',
    description: 'Installs or enables a systemd unit',
    severity: 3,
    categories: ['persistence'],
    ttp: ['T1543.002'],
  };

  constructor() {
    super({
      files: [
        { path: /^\/(etc|run|lib|usr\/lib|usr\/local\/lib)\/systemd\/(system|user)\/.+\.(service|timer|socket|path)$/, access: MODIFY },
        { path: /\/\.config\/systemd\/user\/.+\.(service|timer|socket|path)$/, access: MODIFY },
        { path: /^\/etc\/systemd\/(system|user)\.conf(\.d\/.*)?$/, access: MODIFY },
      ],
      programs: [{ program: /^systemctl$/, args: (args) => args.some((arg) => arg === 'enable' || arg === 'link' || arg === 'reenable') }],
    });
  }
}
