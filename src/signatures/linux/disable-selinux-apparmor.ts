import { MODIFY } from '../helpers/file-access.js';
import { RuleSignature } from '../rule-signature.js';
import type { SignatureInfo } from '../signature.js';

const MAC = /^(apparmor|selinux)(\.service)?$/;
const stopsMac = (args: readonly string[]) => args.some((arg) => ['stop', 'disable', 'mask', 'teardown'].includes(arg)) && args.some((arg) => MAC.test(arg));

export class DisableSelinuxApparmor extends RuleSignature {
  readonly info: SignatureInfo = {
    name: 'disable_selinux_apparmor',
    description: 'Disables or weakens SELinux or AppArmor',
    severity: 4,
    categories: ['evasion'],
    ttp: ['T1562.001'],
  };

  constructor() {
    super({
      programs: [
        { program: /^setenforce$/, args: (args) => args.some((arg) => /^(0|permissive)$/i.test(arg)) },
        { program: /^(aa-teardown|aa-disable|aa-complain)$/ },
        { program: /^apparmor_parser$/, args: (args) => args.some((arg) => arg === '-R' || arg === '--remove') },
        { program: /^(systemctl|service)$/, args: stopsMac },
        { program: /^apparmor$/, args: (args) => args.some((arg) => arg === 'stop' || arg === 'teardown') },
      ],
      files: [
        { path: /^\/(sys\/fs\/selinux\/(enforce|disable)|selinux\/enforce|etc\/selinux\/config|etc\/sysconfig\/selinux)$/, access: MODIFY },
        { path: /^\/(sys\/kernel\/security\/apparmor\/\.remove|sys\/module\/apparmor\/parameters\/enabled|etc\/apparmor\.d\/disable\/.+)$/, access: MODIFY },
      ],
    });
  }
}
