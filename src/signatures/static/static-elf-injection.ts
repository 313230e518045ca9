import { StaticRuleSignature } from '../static-rule-signature.js';
import type { SignatureInfo } from '../signature.js';

/** A Linux executable with the ptrace calls of an injector (rules/yara/capabilities-elf.yar). */
export class StaticElfInjection extends StaticRuleSignature {
  readonly strength = 4;
  readonly info: SignatureInfo = {
    name: 'static_elf_injection',
    description: 'The Linux executable carries the ptrace calls to inject code into another process (attach, write memory, set registers)',
    severity: 2,
    categories: ['injection', 'static'],
    ttp: ['T1055', 'T1055.008'],
  };
}
