import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { unavailable } from '../../../errors.js';
import { ipToNumber, numberToIp } from '../../../util/ipv4.js';

/**
 * Each task gets a /30 in 10.200.0.0/16 for the link between its machine and its gateway, and, for
 * route=internet, the /30 at the same place in 10.201.0.0/16 for the gateway's uplink to the host.
 * The block comes from a hash of the task network's id, moved on past blocks in use by this process or
 * overlapping a route of the host. Each task's link lives only inside its own two namespaces, so a block
 * that another nestbox process also uses does no harm; only the uplink's block is seen by the host.
 */
const TASK_BASE = ipToNumber('10.200.0.0');
const UPLINK_BASE = ipToNumber('10.201.0.0');
const BLOCKS = 2 ** 14;
const inUse = new Set<number>();

export interface TaskAddresses {
  block: number;
  guest: string;
  gateway: string;
  /** Uplink /30: host end and gateway end (route=internet only). */
  uplinkHost: string;
  uplinkGateway: string;
  uplinkSubnet: string;
  prefixLength: 30;
  release(): void;
}

export function allocateAddresses(id: string): TaskAddresses {
  const hostRoutes = readHostRoutes();
  const start = createHash('sha256').update(id).digest().readUInt16BE(0) % BLOCKS;
  for (let step = 0; step < BLOCKS; step += 1) {
    const block = (start + step) % BLOCKS;
    if (inUse.has(block)) continue;
    const task = TASK_BASE + block * 4;
    const uplink = UPLINK_BASE + block * 4;
    if (hostRoutes.some((route) => overlaps(route, task) || overlaps(route, uplink))) continue;
    inUse.add(block);
    return {
      block,
      gateway: numberToIp(task + 1),
      guest: numberToIp(task + 2),
      uplinkHost: numberToIp(uplink + 1),
      uplinkGateway: numberToIp(uplink + 2),
      uplinkSubnet: `${numberToIp(uplink)}/30`,
      prefixLength: 30,
      release: () => inUse.delete(block),
    };
  }
  throw unavailable('no free address block for a task network in 10.200.0.0/16', { context: { id } });
}

interface Ipv4Route {
  network: number;
  mask: number;
}

/** The host's IPv4 routes (main table), from /proc/net/route, where addresses are little-endian hex. */
export function readHostRoutes(): Ipv4Route[] {
  let text: string;
  try {
    text = readFileSync('/proc/net/route', 'utf8');
  } catch {
    return [];
  }
  return text
    .split('\n')
    .slice(1)
    .map((line) => line.trim().split(/\s+/))
    .filter((fields) => fields.length >= 8)
    .map((fields) => ({ network: littleEndianHex(fields[1]!), mask: littleEndianHex(fields[7]!) }))
    .filter((route) => route.mask !== 0);
}

function overlaps(route: Ipv4Route, blockStart: number): boolean {
  const blockMask = 0xfffffffc;
  const common = (route.mask & blockMask) >>> 0;
  return ((route.network & common) >>> 0) === ((blockStart & common) >>> 0);
}

function littleEndianHex(hex: string): number {
  const value = Number.parseInt(hex, 16);
  return (((value & 0xff) << 24) | (((value >>> 8) & 0xff) << 16) | (((value >>> 16) & 0xff) << 8) | (value >>> 24)) >>> 0;
}
