import { mustRun, runCommand } from '../host/command.js';
import { internal } from '../../errors.js';
import type { TaskNetwork } from '../host/contracts.js';

/**
 * The guest's analysis network card on the host side: a tap device, created in the host's namespace so
 * that QEMU (which runs there, next to its loopback agent port) can open it, then moved into the task's
 * machine namespace and bridged with the link to the task's gateway. The guest then takes the machine's
 * address: routing, the fake internet and the capture of the task network apply to it unchanged.
 * Deleting the namespace deletes the tap with it.
 */
export const TAP_PREFIX = 'nbq-';
const BRIDGE = 'nbq-br';

export function tapName(id: string): string {
  return `${TAP_PREFIX}${id}`;
}

export async function createTap(name: string): Promise<void> {
  await mustRun(['ip', 'tuntap', 'add', 'dev', name, 'mode', 'tap'], `creating the tap device ${name}`);
}

/** Call once QEMU has opened the tap. Returns the prefix length of the machine's address, for the guest. */
export async function plugIntoTaskNetwork(tap: string, network: TaskNetwork): Promise<number> {
  const { ifname: uplink, prefixlen } = await interfaceWithAddress(network.netnsName, network.guestAddress);
  await mustRun(['ip', 'link', 'set', 'dev', tap, 'netns', network.netnsName], `moving ${tap} into the task network`);
  const batch = [
    `link add ${BRIDGE} type bridge`,
    `link set ${uplink} master ${BRIDGE}`,
    `link set ${tap} master ${BRIDGE}`,
    `addr flush dev ${uplink}`,
    `link set ${BRIDGE} up`,
    `link set ${tap} up`,
  ].join('\n');
  await mustRun(['ip', '-netns', network.netnsName, '-batch', '-'], `bridging ${tap} in the task network`, { input: `${batch}\n` });
  return prefixlen;
}

/** A further address on the bridge of the machine's namespace (the result link of a Windows guest). */
export async function addBridgeAddress(netns: string, cidr: string): Promise<void> {
  await mustRun(['ip', '-netns', netns, 'addr', 'add', cidr, 'dev', BRIDGE], `adding ${cidr} to the task network's bridge`);
}

/** Removes a tap still in the host's namespace (a start that failed before the move); never throws. */
export async function removeTap(name: string): Promise<void> {
  await runCommand(['ip', 'link', 'delete', 'dev', name]).catch(() => undefined);
}

async function interfaceWithAddress(netns: string, address: string): Promise<{ ifname: string; prefixlen: number }> {
  const output = await mustRun(['ip', '-netns', netns, '-json', 'address', 'show'], 'reading the task network addresses');
  const links = JSON.parse(output) as { ifname: string; addr_info?: { local?: string; prefixlen?: number }[] }[];
  for (const link of links) {
    const info = link.addr_info?.find((candidate) => candidate.local === address);
    if (info) return { ifname: link.ifname, prefixlen: info.prefixlen ?? 24 };
  }
  throw internal(`no interface holds the machine address ${address} in ${netns}`, { context: { netns, address } });
}
