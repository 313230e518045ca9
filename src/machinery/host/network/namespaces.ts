import { existsSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';
import { internal } from '../../../errors.js';
import type { TaskAddresses } from './addressing.js';
import { inNetns, ipBatch, run } from './commands.js';
import { GATEWAY_INTERFACE, GUEST_INTERFACE, netnsPath, UPLINK_INTERFACE, type TaskNames } from './names.js';
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

/**
 * Kills what a crash left running in a namespace (it lives on, unnamed, as long as anything runs in it)
 * and waits until it is gone; returns how many processes there were.
 */
export async function killProcessesIn(netns: string): Promise<number> {
  return (await drainNamespace(netns)).length;
}

/**
 * Makes sure nothing runs in a namespace any more: whatever still does is killed, and this returns only
 * once the namespace is empty, with the pids it found (none when every helper was stopped properly).
 * Throws when processes are still there after timeoutMs.
 */
export async function drainNamespace(netns: string, timeoutMs = 3000): Promise<number[]> {
  const found = await pidsIn(netns);
  const deadline = Date.now() + timeoutMs;
  for (let left = found; left.length > 0; left = await pidsIn(netns)) {
    if (Date.now() > deadline) {
      throw internal(`processes still run in ${netns} after SIGKILL: ${left.join(' ')}`, { context: { netns, pids: left } });
    }
    for (const pid of left) killQuietly(pid);
    await sleep(20);
  }
  return found;
}

/** Pids whose network namespace is netns (a killed process leaves the list when it exits, even unreaped). */
async function pidsIn(netns: string): Promise<number[]> {
  const { stdout, stderr, code } = await run('ip', ['netns', 'pids', netns], { allowFailure: true });
  if (code !== 0) {
    // A namespace already removed holds nothing; any other failure must not pass for "empty".
    if (!existsSync(netnsPath(netns))) return [];
    throw internal(`cannot list the processes in ${netns}: ${stderr.trim()}`, { context: { netns, code } });
  }
  return stdout.split('\n').map(Number).filter((pid) => Number.isInteger(pid) && pid > 0);
}

function killQuietly(pid: number): void {
  try {
    process.kill(pid, 'SIGKILL');
  } catch {
    // already gone
  }
}
