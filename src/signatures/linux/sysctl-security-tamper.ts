import { MODIFY } from '../helpers/file-access.js';
import { RuleSignature } from '../rule-signature.js';
import type { SignatureInfo } from '../signature.js';

const KNOBS = '(kernel\\/randomize_va_space|kernel\\/yama\\/ptrace_scope|kernel\\/kptr_restrict|kernel\\/dmesg_restrict|kernel\\/perf_event_paranoid|kernel\\/core_pattern|kernel\\/modules_disabled|fs\\/suid_dumpable)';

export class SysctlSecurityTamper extends RuleSignature {
  readonly info: SignatureInfo = {
    name: 'sysctl_security_tamper',
    description: 'Weakens kernel protections through sysctl (ASLR, ptrace scope, pointer hiding, core dumps)',
    severity: 3,
    categories: ['evasion'],
    ttp: ['T1562.001'],
  };

  constructor() {
    super({
      files: [{ path: new RegExp(`^\\/proc\\/sys\\/${KNOBS}$`), access: MODIFY }],
      programs: [{ program: /^sysctl$/, args: (args) => args.some((arg) => new RegExp(`^${KNOBS.replace(/\\\//g, '[./]')}=`).test(arg)) }],
    });
  }
}
