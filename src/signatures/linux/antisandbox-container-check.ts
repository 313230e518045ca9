import { filesRead, RuleSignature } from '../rule-signature.js';
import type { SignatureInfo } from '../signature.js';

export class AntisandboxContainerCheck extends RuleSignature {
  readonly info: SignatureInfo = {
    name: 'antisandbox_container_check',
    description: 'Checks whether it runs in a container or sandbox (init\'s cgroups, container marker files)',
    severity: 2,
    categories: ['anti-sandbox'],
    ttp: ['T1497.001'],
  };

  constructor() {
    super({
      files: filesRead(
        /^\/proc\/1\/(cgroup|sched|environ|mountinfo|mounts|root)$/,
        /^\/(\.dockerenv|run\/\.containerenv|proc\/vz(\/.*)?|proc\/bc(\/.*)?)$/,
      ),
    });
  }
}
