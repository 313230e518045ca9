import type { TaskAddresses } from './addressing.js';
import { inNetns, ipBatch, run } from './commands.js';
import { GATEWAY_INTERFACE, GUEST_INTERFACE, UPLINK_INTERFACE, type TaskNames } from './names.js';
import { uplinkLinkLines } from './uplink.js';

/**
 * The two namespaces of a task: the machine's, whose only interface (besides loopback) leads to the
 * gateway's, which has no uplink unless the route is internet. The veth is created directly inside the
 * two namespaces, so the host never sees its ends.
 */
const NO_IPV6 = ['net.ipv6.conf.all.disable_ipv6=1', 'net.ipv6.conf.default.disable_ipv6=1'];

export interface NamespaceOptions {
  names: TaskNames;
  addresses: TaskAddresses;
  withUplink: boolean;
  /** nft script for the gateway, loaded while the links are made. */
  gatewayRules: string;
}

export async function addNamespaces(names: TaskNames): Promise<void> {
  await ipBatch([`netns add ${names.gatewayNetns}`, `netns add ${names.machineNetns}`]);
}

/** Configures the namespaces made by addNamespaces: sysctls, the gateway's rules, links, addresses, routes. */
export async function wireNamespaces({ names, addresses, withUplink, gatewayRules }: NamespaceOptions): Promise<void> {
  const { machineNetns: machine, gatewayNetns: gateway } = names;
  // IPv6 is off before the links exist, so no router solicitation or MLD report ever reaches the capture.
  const gatewaySysctls = withUplink ? [...NO_IPV6, 'net.ipv4.ip_forward=1'] : NO_IPV6;
  await Promise.all([
    inNetns(gateway, 'sysctl', ['-q', '-w', ...gatewaySysctls]),
    inNetns(machine, 'sysctl', ['-q', '-w', ...NO_IPV6]),
    inNetns(gateway, 'nft', ['-f', '-'], { input: gatewayRules }),
  ]);
  await ipBatch([
    `link add ${GATEWAY_INTERFACE} netns ${gateway} type veth peer name ${GUEST_INTERFACE} netns ${machine}`,
    ...(withUplink ? uplinkLinkLines(names, addresses, UPLINK_INTERFACE) : []),
  ]);
  const prefix = addresses.prefixLength;
  await Promise.all([
    ipBatch(
      [
        'link set lo up',
        `addr add ${addresses.gateway}/${prefix} dev ${GATEWAY_INTERFACE}`,
        `link set ${GATEWAY_INTERFACE} up`,
        ...(withUplink
          ? [
              `addr add ${addresses.uplinkGateway}/${prefix} dev ${UPLINK_INTERFACE}`,
              `link set ${UPLINK_INTERFACE} up`,
              `route add default via ${addresses.uplinkHost}`,
            ]
          : []),
      ],
      gateway,
    ),
    ipBatch(
      [
        'link set lo up',
        `addr add ${addresses.guest}/${prefix} dev ${GUEST_INTERFACE}`,
        `link set ${GUEST_INTERFACE} up`,
        `route add default via ${addresses.gateway}`,
      ],
      machine,
    ),
  ]);
}

/** Removes both namespaces; their links go with them. */
export async function deleteNamespaces(names: TaskNames): Promise<void> {
  await ipBatch([`netns del ${names.machineNetns}`, `netns del ${names.gatewayNetns}`], undefined, { allowFailure: true });
}

/** A namespace lives on, unnamed, as long as anything runs in it: what a crash left running is killed. */
export async function killProcessesIn(netns: string): Promise<number> {
  const { stdout } = await run('ip', ['netns', 'pids', netns], { allowFailure: true });
  const pids = stdout.split('\n').map(Number).filter((pid) => Number.isInteger(pid) && pid > 0);
  for (const pid of pids) {
    try {
      process.kill(pid, 'SIGKILL');
    } catch {
      // already gone
    }
  }
  return pids.length;
}

/** Kills whatever still runs in a namespace and waits (briefly) until it is gone, so nothing outlives a task. */
export async function drainNamespace(netns: string, timeoutMs = 3000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while ((await killProcessesIn(netns)) > 0 && Date.now() < deadline) {
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}
