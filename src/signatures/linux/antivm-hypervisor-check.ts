import { filesRead, RuleSignature } from '../rule-signature.js';
import type { SignatureInfo } from '../signature.js';

export class AntivmHypervisorCheck extends RuleSignature {
  readonly info: SignatureInfo = {
    name: 'antivm_hypervisor_check',
    description: 'Looks for signs of a hypervisor (cpuinfo flags, hypervisor devices, guest drivers)',
    severity: 2,
    categories: ['anti-vm'],
    ttp: ['T1497.001'],
  };

  constructor() {
    super({
      files: filesRead(
        /^\/(sys\/hypervisor\/|proc\/xen|dev\/(vboxguest|vboxuser|vmci)|proc\/scsi\/scsi$)/,
        /^\/sys\/module\/(vboxguest|vboxsf|vboxvideo|vmw_\w+|vmwgfx|xen\w*|hv_\w+|virtio_balloon)(\/|$)/,
      ),
      commandLines: [
        /^(?=.*(cpuinfo|dmesg|lspci|lscpu|lsmod|\/sys\/|scsi|dmi))(?=.*\b(hypervisor|vmware|virtualbox|vbox|qemu|kvm|xen|bochs|parallels|hyper-?v|innotek)\b)/i,
      ],
    });
  }
}
