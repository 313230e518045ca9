import { filesRead, RuleSignature } from '../rule-signature.js';
import type { SignatureInfo } from '../signature.js';

export class SystemInfoDiscovery extends RuleSignature {
  readonly info: SignatureInfo = {
    name: 'system_info_discovery',
    description: 'Collects operating system and hardware information',
    severity: 1,
    categories: ['discovery'],
    ttp: ['T1082'],
  };

  constructor() {
    super({
      programs: [{ program: /^(uname|hostnamectl|lscpu|lsb_release|lshw|lsblk|lspci|lsusb|dmesg)$/ }],
      files: filesRead(/^\/(proc\/(version|cpuinfo)|etc\/(os-release|issue|lsb-release|[a-z]+-release))$/),
    });
  }
}
