import { baseApi, dwordArg, handleArg, returnedHandle, stringArg, type WinCall } from '../helpers/windows-calls.js';
import type { SignatureContext, SignatureInfo } from '../signature.js';
import { WindowsRuleSignature } from './windows-rule-signature.js';

/** Defender's, the Security Center's and the firewall's services. */
const SECURITY_SERVICE = /^(WinDefend|WdNisSvc|WdNisDrv|WdFilter|WdBoot|Sense|SecurityHealthService|wscsvc|MpsSvc)$/i;
const SECURITY_SERVICE_WORD = /"?(WinDefend|WdNisSvc|Sense|SecurityHealthService|wscsvc|MpsSvc|Windows Defender( Antivirus Service)?|Security Center)\b/i;

const DEFENDER_SETTINGS = [
  /\\Policies\\Microsoft\\Windows Defender(\\[^\\]+)*\\(DisableAntiSpyware|DisableAntiVirus|DisableRealtimeMonitoring|DisableBehaviorMonitoring|DisableOnAccessProtection|DisableScanOnRealtimeEnable|DisableIOAVProtection|DisableRoutinelyTakingAction|DisableBlockAtFirstSeen|SpynetReporting|SubmitSamplesConsent)$/i,
  /\\Microsoft\\Windows Defender\\(Exclusions\\(Paths|Processes|Extensions)\\[^\\]+|Features\\TamperProtection|Real-Time Protection\\Disable\w+)$/i,
  /^HKEY_LOCAL_MACHINE\\SYSTEM\\(CurrentControlSet|ControlSet\d{3})\\Services\\(WinDefend|WdNisSvc|WdFilter|WdBoot|Sense|SecurityHealthService|wscsvc)\\Start$/i,
  /\\Microsoft\\Security Center\\(AntiVirusDisableNotify|FirewallDisableNotify|UpdatesDisableNotify)$/i,
];

const COMMANDS = [
  /\bSet-MpPreference\b.*-(Disable\w+|Exclusion\w+|MAPSReporting|SubmitSamplesConsent)\b/i,
  /\bAdd-MpPreference\b.*-Exclusion\w+/i,
  new RegExp(`\\b(sc|net|net1)(\\.exe)?"?\\s+(\\\\\\\\\\S+\\s+)?(stop|config|delete)\\s+${SECURITY_SERVICE_WORD.source}`, 'i'),
  /\btaskkill(\.exe)?"?\s.*\b(MsMpEng|MpCmdRun|NisSrv|SecurityHealthService|SecurityHealthSystray|MSASCui\w*)(\.exe)?\b/i,
  /\bMpCmdRun(\.exe)?"?\s.*-RemoveDefinitions\b/i,
  /\b(Uninstall-WindowsFeature|Disable-WindowsOptionalFeature)\b.*Defender/i,
];

const SERVICE_CONTROL_STOP = 1;
const SERVICE_DISABLED = 4;

/**
 * Security tools switched off: Defender's policies and exclusions in the registry, Set-MpPreference,
 * `sc stop WinDefend` and the like, killing Defender's processes, or stopping, disabling or deleting a
 * security service through the service manager (OpenService, then ControlService/ChangeServiceConfig/
 * DeleteService on that handle).
 */
export class WinDisableSecurityTools extends WindowsRuleSignature {
  readonly info: SignatureInfo = {
    name: 'win_disable_security_tools',
    description: 'Disables Windows Defender or other security tools (policies, exclusions, stopping their services or processes)',
    severity: 3,
    categories: ['evasion'],
    ttp: ['T1562.001'],
  };

  /** Process -> security-service handle -> the OpenService call that gave it. */
  readonly #opened = new Map<number, Map<string, WinCall>>();

  constructor() {
    super({ registryWrites: DEFENDER_SETTINGS, commandLines: COMMANDS });
  }

  protected override onCall(event: WinCall, ctx: SignatureContext): void {
    const api = baseApi(event);
    if (api === 'OpenService') this.#rememberOpen(event);
    else if (api === 'ControlService' || api === 'ControlServiceEx' || api === 'ChangeServiceConfig' || api === 'DeleteService') this.#serviceChanged(event, api, ctx);
    else super.onCall(event, ctx);
  }

  #rememberOpen(event: WinCall): void {
    const handle = returnedHandle(event);
    if (!SECURITY_SERVICE.test(stringArg(event, 'lpServiceName', 'service_name') ?? '') || handle === undefined || handle === '0x0') return;
    const handles = this.#opened.get(event.pid) ?? new Map<string, WinCall>();
    handles.set(handle, event);
    this.#opened.set(event.pid, handles);
  }

  #serviceChanged(event: WinCall, api: string, ctx: SignatureContext): void {
    const open = this.#opened.get(event.pid)?.get(handleArg(event, 'hService', 'service_handle') ?? '');
    if (!open) return;
    const harmful =
      api === 'DeleteService' ||
      (api === 'ChangeServiceConfig' && dwordArg(event, 'dwStartType') === SERVICE_DISABLED) ||
      (api.startsWith('ControlService') && dwordArg(event, 'dwControl') === SERVICE_CONTROL_STOP);
    if (!harmful) return;
    this.markEvent(open, ctx);
    this.markEvent(event, ctx);
  }
}
