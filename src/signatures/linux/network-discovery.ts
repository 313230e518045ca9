import { filesRead, RuleSignature } from '../rule-signature.js';
import type { SignatureInfo } from '../signature.js';

export class NetworkDiscovery extends RuleSignature {
  readonly info: SignatureInfo = {
    name: 'network_discovery',
    description: 'Looks up the machine\'s network configuration and connections',
    severity: 1,
    categories: ['discovery'],
    ttp: ['T1016'],
  };

  constructor() {
    super({
      programs: [{ program: /^(ifconfig|ip|netstat|ss|arp|route|iwconfig|nmcli|iptables-save)$/ }],
      files: filesRead(/^\/proc\/net\/(tcp6?|udp6?|route|arp|dev|if_inet6|fib_trie|ipv6_route)$/),
    });
  }
}
