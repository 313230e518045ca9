import type { SignatureInfo } from '../signature.js';
import { WindowsRuleSignature } from './windows-rule-signature.js';

/** The autostart keys Windows runs at logon (native and 32-bit views, per user, per machine, by policy). */
const RUN_KEY =
  /^HKEY_(CURRENT_USER|LOCAL_MACHINE|USERS\\[^\\]+)\\Software\\(Wow6432Node\\)?Microsoft\\Windows\\CurrentVersion\\(Run|RunOnce|RunOnceEx|RunServices|RunServicesOnce|Policies\\Explorer\\Run)(\\|$)/i;
const STARTUP_FOLDER = /\\Start Menu\\Programs\\Startup\\[^\\]+$/i;
const REG_ADD_RUN_KEY = /\breg(\.exe)?"?\s+add\s+"?(HKCU|HKLM|HKEY_CURRENT_USER|HKEY_LOCAL_MACHINE)\\Software\\(Wow6432Node\\)?Microsoft\\Windows\\CurrentVersion\\(Run|RunOnce)\b/i;

/** Run-key persistence: a value under a Run/RunOnce key, or a file put into a Startup folder. */
export class WinPersistenceRunKey extends WindowsRuleSignature {
  readonly info: SignatureInfo = {
    name: 'win_persistence_run_key',
    description: 'Makes Windows start a program at every logon (Run/RunOnce registry value or Startup folder)',
    severity: 3,
    categories: ['persistence'],
    ttp: ['T1547.001'],
  };

  constructor() {
    super({ registryWrites: [RUN_KEY], fileWrites: [STARTUP_FOLDER], commandLines: [REG_ADD_RUN_KEY] });
  }
}
