import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { invalidInput, unavailable } from '../../../errors.js';
import type { TaskAddresses } from './addressing.js';
import { ipBatch, run } from './commands.js';
import { HOST_LINK_PREFIX, type TaskNames } from './names.js';
import { OWNERS_DIR } from './ownership.js';

/**
 * route=internet, host side. The gateway namespace gets an uplink veth to the host; the host sends what
 * comes from that uplink's subnet, and only that, out of the configured interface with policy routing,
 * and masquerades it there. The uplink may not reach the host itself nor any other interface.
 */
export const ROUTE_TABLE = 50420;
const RULE_PRIORITY = 20420;
const INTERFACE_NAME = /^[A-Za-z0-9_.:-]{1,15}$/;

/** Refuses an internet route that cannot work, saying why, instead of giving the task no network. */
export function checkInternetInterface(name: string): void {
  if (name === '') {
    throw unavailable('route "internet" is not available: no internet interface is configured (routing.internet_interface)');
  }
  if (!INTERFACE_NAME.test(name) || name === '.' || name === '..') {
    throw invalidInput(`the internet interface name ${JSON.stringify(name)} is not a valid interface name`, { context: { name } });
  }
  const state = readOperState(name);
  if (state === null) throw unavailable(`route "internet" is not available: interface ${name} does not exist`, { context: { name } });
  if (state === 'down' || state === 'lowerlayerdown') throw unavailable(`route "internet" is not available: interface ${name} is down`, { context: { name } });
}

export function readOperState(name: string): string | null {
  try {
    return readFileSync(`/sys/class/net/${name}/operstate`, 'utf8').trim();
  } catch {
    return null;
  }
}

/** The host's first non-loopback IPv4 resolver, which the machine's DNS queries are sent on to. */
export function hostResolver(): string | null {
  try {
    const text = readFileSync('/etc/resolv.conf', 'utf8');
    for (const match of text.matchAll(/^\s*nameserver\s+(\d+\.\d+\.\d+\.\d+)\s*$/gm)) {
      if (!match[1]!.startsWith('127.')) return match[1]!;
    }
  } catch {
    // no resolver known: the machine gets no DNS on this route
  }
  return null;
}

/** ip -batch lines (host namespace) creating the uplink veth, its host end addressed and up. */
export function uplinkLinkLines(names: TaskNames, addresses: TaskAddresses, uplinkInGateway: string): string[] {
  return [
    `link add ${names.hostLink} type veth peer name ${uplinkInGateway} netns ${names.gatewayNetns}`,
    `addr add ${addresses.uplinkHost}/${addresses.prefixLength} dev ${names.hostLink}`,
    `link set ${names.hostLink} up`,
  ];
}

export async function connectUplink(names: TaskNames, addresses: TaskAddresses, internetInterface: string): Promise<void> {
  const guard = enableForwarding(internetInterface);
  await run('sysctl', ['-q', '-w', `net.ipv4.conf.${names.hostLink}.forwarding=1`]);
  await ipBatch([
    ...(await copiedRoutes(internetInterface)),
    `rule add from ${addresses.uplinkSubnet} lookup ${ROUTE_TABLE} priority ${RULE_PRIORITY}`,
  ]);
  await run('nft', ['-f', '-'], { input: hostRules(names, addresses, internetInterface, guard) });
}

export async function disconnectUplink(names: TaskNames, addresses: TaskAddresses): Promise<void> {
  await ipBatch(
    [`rule del from ${addresses.uplinkSubnet} lookup ${ROUTE_TABLE} priority ${RULE_PRIORITY}`, `link del ${names.hostLink}`],
    undefined,
    { allowFailure: true },
  );
  await run('nft', ['delete', 'table', 'inet', names.hostTable], { allowFailure: true });
  restoreForwardingWhenUnused();
}

/**
 * Replies from the internet arrive on the internet interface, and IPv4 forwards only what arrives on an
 * interface with forwarding on: so it is turned on there (never host-wide). If it was off, nestbox
 * remembers that it turned it on, guards the interface against forwarding anything else while tasks
 * use it, and turns it off again when the last uplink is gone.
 */
function enableForwarding(internetInterface: string): boolean {
  const setting = `/proc/sys/net/ipv4/conf/${internetInterface}/forwarding`;
  const marker = join(OWNERS_DIR, `forwarding-${internetInterface}`);
  if (readFileSync(setting, 'utf8').trim() === '1') return existsSync(marker);
  mkdirSync(OWNERS_DIR, { recursive: true, mode: 0o700 });
  writeFileSync(marker, '');
  writeFileSync(setting, '1');
  return true;
}

export function restoreForwardingWhenUnused(): void {
  if (readdirSync('/sys/class/net').some((name) => name.startsWith(HOST_LINK_PREFIX))) return;
  let markers: string[];
  try {
    markers = readdirSync(OWNERS_DIR).filter((name) => name.startsWith('forwarding-'));
  } catch {
    return;
  }
  for (const marker of markers) {
    const internetInterface = marker.slice('forwarding-'.length);
    try {
      writeFileSync(`/proc/sys/net/ipv4/conf/${internetInterface}/forwarding`, '0');
    } catch {
      // the interface is gone, and its setting with it
    }
    rmSync(join(OWNERS_DIR, marker), { force: true });
  }
}

/** The interface's routes from the main table, copied into nestbox's table, so only they are used. */
async function copiedRoutes(internetInterface: string): Promise<string[]> {
  const { stdout } = await run('ip', ['-j', 'route', 'show', 'table', 'main', 'dev', internetInterface]);
  const routes = JSON.parse(stdout || '[]') as { dst: string; gateway?: string; prefsrc?: string }[];
  if (!routes.some((route) => route.dst === 'default')) {
    throw unavailable(`route "internet" is not available: interface ${internetInterface} has no default route`, {
      context: { internetInterface, routes },
    });
  }
  return routes.map(
    (route) =>
      `route replace ${route.dst}${route.gateway ? ` via ${route.gateway}` : ''} dev ${internetInterface}` +
      `${route.prefsrc ? ` src ${route.prefsrc}` : ''} table ${ROUTE_TABLE}`,
  );
}

function hostRules(names: TaskNames, addresses: TaskAddresses, internetInterface: string, guard: boolean): string {
  const link = `"${names.hostLink}"`;
  const out = `"${internetInterface}"`;
  const guardRule = guard ? `iifname ${out} ct state new drop` : '';
  return `table inet ${names.hostTable}
delete table inet ${names.hostTable}
table inet ${names.hostTable} {
  chain input {
    type filter hook input priority filter - 10; policy accept;
    iifname ${link} drop
  }
  chain forward {
    type filter hook forward priority filter - 10; policy accept;
    iifname ${link} oifname ${out} ip saddr ${addresses.uplinkSubnet} accept
    iifname ${out} oifname ${link} ct state established,related accept
    iifname ${link} drop
    oifname ${link} drop
    ${guardRule}
  }
  chain hide {
    type nat hook postrouting priority srcnat; policy accept;
    ip saddr ${addresses.uplinkSubnet} oifname ${out} masquerade
  }
}
`;
}
