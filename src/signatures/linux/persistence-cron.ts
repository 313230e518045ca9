import { MODIFY } from '../helpers/file-access.js';
import { RuleSignature } from '../rule-signature.js';
import type { SignatureInfo } from '../signature.js';

export class PersistenceCron extends RuleSignature {
  readonly info: SignatureInfo = {
    name: 'persistence_cron',
    description: 'Installs a cron job by writing cron tables',
    severity: 3,
    categories: ['persistence'],
    ttp: ['T1053.003'],
  };

  constructor() {
    super({
      files: [{ path: /^\/(etc\/(crontab|anacrontab|cron\.(d|hourly|daily|weekly|monthly)\/.+)|var\/spool\/cron\/.+)$/, access: MODIFY }],
    });
  }
}
