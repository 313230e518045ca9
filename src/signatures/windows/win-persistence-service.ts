import { baseApi, stringArg, type WinCall } from '../helpers/windows-calls.js';
import type { SignatureContext, SignatureInfo } from '../signature.js';
import { WindowsRuleSignature } from './windows-rule-signature.js';

/** The program of a service: its ImagePath, or the DLL svchost loads for it. */
const SERVICE_PROGRAM = /^HKEY_LOCAL_MACHINE\\SYSTEM\\(CurrentControlSet|ControlSet\d{3})\\Services\\[^\\]+\\(ImagePath|Parameters\\ServiceDll)$/i;
const COMMANDS = [/\bsc(\.exe)?"?\s+(\\\\\S+\s+)?create\s/i, /\bsc(\.exe)?"?\s+(\\\\\S+\s+)?config\s+\S+\s+binpath=/i, /\bNew-Service\b/i];

/**
 * A Windows service installed (or an existing one pointed at another program): CreateService,
 * ChangeServiceConfig with a new binary, the service's registry values, or `sc create` / New-Service.
 */
export class WinPersistenceService extends WindowsRuleSignature {
  readonly info: SignatureInfo = {
    name: 'win_persistence_service',
    description: 'Installs a Windows service or points one at another program',
    severity: 3,
    categories: ['persistence', 'privilege_escalation'],
    ttp: ['T1543.003'],
  };

  constructor() {
    super({ registryWrites: [SERVICE_PROGRAM], commandLines: COMMANDS });
  }

  protected override onCall(event: WinCall, ctx: SignatureContext): void {
    const api = baseApi(event);
    if (api === 'CreateService' || (api === 'ChangeServiceConfig' && stringArg(event, 'lpBinaryPathName') !== undefined)) this.markEvent(event, ctx);
    else super.onCall(event, ctx);
  }
}
