import { CATCH_ALL_PORT, DNS_PORT, keptTcpPorts } from './fake-services/ports.js';
import { GATEWAY_INTERFACE, GATEWAY_TABLE, UPLINK_INTERFACE } from './names.js';

/**
 * The nftables rule set of a task's gateway namespace, one whole script per route, loaded with one
 * `nft -f`. Packets are judged as they arrive from the machine (prerouting), before any routing, so
 * nothing depends on the gateway's routes or on kernel defaults.
 */
export type GatewayRoute = 'inetsim' | 'none' | 'drop' | 'internet';

export interface GatewayRuleOptions {
  route: GatewayRoute;
  gateway: string;
  /** route=internet: the resolver the machine's DNS queries to the gateway are sent on to, if any. */
  resolver?: string | null;
}

const FROM_MACHINE = `iifname "${GATEWAY_INTERFACE}"`;

export function gatewayRules(options: GatewayRuleOptions): string {
  const body = {
    inetsim: fakeInternetChains,
    none: refuseChains,
    drop: dropChains,
    internet: internetChains,
  }[options.route](options);
  // Deleting first makes the script replace whatever an earlier load left.
  return `table inet ${GATEWAY_TABLE}\ndelete table inet ${GATEWAY_TABLE}\ntable inet ${GATEWAY_TABLE} {\n${body}}\n`;
}

/**
 * route=inetsim: every TCP connection, whatever its address and port, goes to the fake services (known
 * ports to the same port, the rest to the catch-all); every DNS query to the fake resolver; every ping is
 * answered. Other UDP and other protocols are dropped silently, after the capture has seen them.
 */
function fakeInternetChains({ gateway }: GatewayRuleOptions): string {
  return `
  chain screen {
    type filter hook prerouting priority mangle; policy accept;
    ${FROM_MACHINE} ct state established,related accept
    ${FROM_MACHINE} meta l4proto tcp accept
    ${FROM_MACHINE} udp dport ${DNS_PORT} accept
    ${FROM_MACHINE} icmp type echo-request accept
    ${FROM_MACHINE} drop
  }
  chain divert_to_gateway {
    type nat hook prerouting priority dstnat; policy accept;
    ${FROM_MACHINE} udp dport ${DNS_PORT} dnat ip to ${gateway}:${DNS_PORT}
    ${FROM_MACHINE} tcp dport { ${keptTcpPorts().join(', ')} } dnat ip to ${gateway}
    ${FROM_MACHINE} meta l4proto tcp dnat ip to ${gateway}:${CATCH_ALL_PORT}
    ${FROM_MACHINE} icmp type echo-request dnat ip to ${gateway}
  }
  chain forward {
    type filter hook forward priority filter; policy drop;
  }
`;
}

/** route=none: nothing answers, and every attempt fails at once (TCP reset, ICMP prohibited). */
function refuseChains(): string {
  return `
  chain screen {
    type filter hook prerouting priority filter; policy accept;
    ${FROM_MACHINE} meta l4proto tcp reject with tcp reset
    ${FROM_MACHINE} reject with icmpx admin-prohibited
  }
`;
}

/** route=drop: every packet of the machine vanishes without an answer. */
function dropChains(): string {
  return `
  chain screen {
    type filter hook prerouting priority filter; policy accept;
    ${FROM_MACHINE} drop
  }
`;
}

/**
 * route=internet: the gateway forwards the machine's traffic out of its uplink to the host, hiding the
 * machine's address behind its own; the machine may not talk to the gateway itself, except DNS, which is
 * sent on to the host's resolver.
 */
function internetChains({ gateway, resolver }: GatewayRuleOptions): string {
  const dns = resolver
    ? `${FROM_MACHINE} ip daddr ${gateway} meta l4proto { tcp, udp } th dport ${DNS_PORT} dnat ip to ${resolver}`
    : '';
  return `
  chain divert_to_gateway {
    type nat hook prerouting priority dstnat; policy accept;
    ${dns}
  }
  chain input {
    type filter hook input priority filter; policy drop;
    iif "lo" accept
    ct state established,related accept
  }
  chain forward {
    type filter hook forward priority filter; policy drop;
    ${FROM_MACHINE} oifname "${UPLINK_INTERFACE}" accept
    iifname "${UPLINK_INTERFACE}" oifname "${GATEWAY_INTERFACE}" ct state established,related accept
  }
  chain hide {
    type nat hook postrouting priority srcnat; policy accept;
    oifname "${UPLINK_INTERFACE}" masquerade
  }
`;
}
