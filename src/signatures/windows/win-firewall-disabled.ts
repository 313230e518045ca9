import type { SignatureInfo } from '../signature.js';
import { WindowsRuleSignature } from './windows-rule-signature.js';

const COMMANDS = [
  /\bnetsh(\.exe)?"?\s+advfirewall\s+set\s+\w+\s+state\s+off\b/i,
  /\bnetsh(\.exe)?"?\s+firewall\s+set\s+opmode\s+(mode=)?disable\b/i,
  /\bSet-NetFirewallProfile\b.*-Enabled\s+(\$false|false|0)\b/i,
];
const FIREWALL_SWITCH =
  /^HKEY_LOCAL_MACHINE\\(SYSTEM\\(CurrentControlSet|ControlSet\d{3})\\Services\\SharedAccess\\Parameters\\FirewallPolicy|SOFTWARE\\Policies\\Microsoft\\WindowsFirewall)\\(StandardProfile|DomainProfile|PublicProfile)\\EnableFirewall$/i;

/** The Windows firewall switched off, by netsh / PowerShell or in its registry settings. */
export class WinFirewallDisabled extends WindowsRuleSignature {
  readonly info: SignatureInfo = {
    name: 'win_firewall_disabled',
    description: 'Switches the Windows firewall off (netsh advfirewall, Set-NetFirewallProfile or its registry settings)',
    severity: 3,
    categories: ['evasion'],
    ttp: ['T1562.004'],
  };

  constructor() {
    super({ commandLines: COMMANDS, registryWrites: [FIREWALL_SWITCH] });
  }
}
