import { filesRead, RuleSignature } from '../rule-signature.js';
import type { SignatureInfo } from '../signature.js';

export class AntivmDmi extends RuleSignature {
  readonly info: SignatureInfo = {
    name: 'antivm_dmi',
    description: 'Reads the machine\'s firmware (DMI/SMBIOS) identity to detect a virtual machine',
    severity: 2,
    categories: ['anti-vm'],
    ttp: ['T1497.001'],
  };

  constructor() {
    super({
      files: filesRead(
        /^\/sys\/(class|devices\/virtual)\/dmi\/id\/(product_\w+|sys_vendor|bios_\w+|board_\w+|chassis_\w+|modalias)$/,
        /^\/sys\/firmware\/dmi\/(tables|entries)\//,
      ),
      programs: [{ program: /^(dmidecode|virt-what|systemd-detect-virt|imvirt|virt-who)$/ }],
    });
  }
}
