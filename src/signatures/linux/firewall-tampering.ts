import { MODIFY } from '../helpers/file-access.js';
import { RuleSignature } from '../rule-signature.js';
import type { SignatureInfo } from '../signature.js';

// iptables-style commands that change rules, chains or policies (-L and -S only list).
const CHANGES_TABLES = (args: readonly string[]) =>
  args.some((arg) => /^(-[a-zA-Z]*[AIDRFXPNEZ][a-zA-Z]*|--(append|insert|delete|replace|flush|delete-chain|policy|new-chain|rename-chain|zero))$/.test(arg));
const ANY_OF = (words: string[]) => (args: readonly string[]) => args.some((arg) => words.includes(arg));

export class FirewallTampering extends RuleSignature {
  readonly info: SignatureInfo = {
    name: 'firewall_tampering',
    description: 'Changes or disables the firewall (iptables, nftables, ufw, firewalld)',
    severity: 3,
    categories: ['evasion'],
    ttp: ['T1562.004'],
  };

  constructor() {
    super({
      programs: [
        { program: /^(ip6?tables|ip6?tables-(legacy|nft)|ebtables|arptables)$/, args: CHANGES_TABLES },
        { program: /^ip6?tables(-(legacy|nft))?-restore$/ },
        { program: /^nft$/, args: (args) => args.some((arg) => ['add', 'insert', 'delete', 'flush', 'replace', 'create', 'destroy', '-f', '--file'].includes(arg)) },
        { program: /^ufw$/, args: ANY_OF(['disable', 'allow', 'deny', 'reject', 'delete', 'reset', 'insert', 'default', 'limit']) },
        { program: /^firewall-cmd$/, args: (args) => args.some((arg) => /^--(add|remove|set|change|panic|direct)/.test(arg)) },
      ],
      files: [{ path: /^\/etc\/(iptables\/.+|nftables\.conf|ufw\/.+|sysconfig\/ip6?tables|firewalld\/.+)$/, access: MODIFY }],
    });
  }
}
