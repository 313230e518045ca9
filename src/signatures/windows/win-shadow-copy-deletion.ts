import type { SignatureInfo } from '../signature.js';
import { WindowsRuleSignature } from './windows-rule-signature.js';

/** Commands that delete Windows' backups and recovery options, as ransomware runs them before encrypting. */
const COMMANDS = [
  /\bvssadmin(\.exe)?"?\s+(delete\s+shadows|resize\s+shadowstorage)\b/i,
  /\bwmic(\.exe)?"?\s.*\bshadowcopy\s+delete\b/i,
  /\bbcdedit(\.exe)?"?\s.*\/set\b.*\b(recoveryenabled\s+(no|off|false|0)|bootstatuspolicy\s+ignoreallfailures)\b/i,
  /\bwbadmin(\.exe)?"?\s+delete\s+(catalog|systemstatebackup|backup)\b/i,
  /\bWin32_ShadowCopy\b.*\b(Delete\(\)|Remove-CimInstance|Remove-WmiObject)/i,
];

export class WinShadowCopyDeletion extends WindowsRuleSignature {
  readonly info: SignatureInfo = {
    name: 'win_shadow_copy_deletion',
    description: 'Deletes shadow copies, backups or boot recovery (vssadmin, wmic shadowcopy, bcdedit, wbadmin), as ransomware does',
    severity: 4,
    categories: ['ransomware'],
    ttp: ['T1490'],
  };

  constructor() {
    super({ commandLines: COMMANDS });
  }
}
