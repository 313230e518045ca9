import { RuleSignature } from '../rule-signature.js';
import type { SignatureInfo } from '../signature.js';

/** Security and cloud-monitoring agents that miners and botnets stop (many target Chinese cloud agents). */
const SECURITY_TOOL =
  /(auditd|falco|osquery|clamd|clamav|freshclam|aliyun|aegis|alihids|alinet|qcloud|ydservice|ydlive|sgagent|barad_agent|bcm-agent|cloudmonitor|sysdig|wazuh|ossec|falcon-sensor|crowdstrike|cbagentd|cbdaemon|sophos|savd|esets|fail2ban|snort|suricata|tripwire|rkhunter|chkrootkit|amazon-ssm-agent|google_guest_agent|waagent|tracee|auditbeat|sysmon)/i;

const names = (args: readonly string[]) => args.some((arg) => SECURITY_TOOL.test(arg));
const verb = (verbs: string[]) => (args: readonly string[]) => args.some((arg) => verbs.includes(arg)) && names(args);

export class KillSecurityTools extends RuleSignature {
  readonly info: SignatureInfo = {
    name: 'kill_security_tools',
    description: 'Stops, disables or removes security and monitoring agents',
    severity: 3,
    categories: ['evasion'],
    ttp: ['T1562.001'],
  };

  constructor() {
    super({
      programs: [
        { program: /^(kill|pkill|killall|killall5)$/, args: names },
        { program: /^systemctl$/, args: verb(['stop', 'disable', 'mask', 'kill']) },
        { program: /^service$/, args: verb(['stop']) },
        { program: /^(update-rc\.d|chkconfig)$/, args: verb(['remove', 'disable', 'off']) },
      ],
      files: [{ path: /^\/(usr\/local\/(aegis|qcloud|cloudmonitor)|usr\/sbin\/aliyun|etc\/init\.d\/(aegis|agentwatch))(\/|$)/, access: ['delete', 'move', 'truncate'] }],
    });
  }
}
