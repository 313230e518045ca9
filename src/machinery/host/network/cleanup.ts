import { existsSync, readdirSync } from 'node:fs';
import type { Logger } from 'pino';
import { ipBatch, run } from './commands.js';
import { HOST_LINK_PREFIX, HOST_TABLE_PREFIX, idFromName, NETNS_PREFIX, type TaskNames } from './names.js';
import { killProcessesIn } from './namespaces.js';
import { forgetDeadOwners, liveIds } from './ownership.js';
import { restoreForwardingWhenUnused, ROUTE_TABLE } from './uplink.js';

/**
 * Removes what task networks of dead nestbox processes left behind: namespaces (and what still runs in
 * them), uplink interfaces, host nftables tables, policy-routing rules and owner records. Networks whose
 * owner process is alive are left alone, so this is safe while other nestbox processes run.
 */
export interface CleanupReport {
  namespaces: string[];
  links: string[];
  tables: string[];
  rules: number;
  processes: number;
}

export async function cleanupStaleNetworks(log?: Logger): Promise<CleanupReport> {
  // Listed before the owners are read: an owner record is written before its network is made, so
  // anything listed here that a live process is making already has its record.
  const found = {
    namespaces: listDir('/run/netns').filter((name) => name.startsWith(NETNS_PREFIX)),
    links: listDir('/sys/class/net').filter((name) => name.startsWith(HOST_LINK_PREFIX)),
    tables: (await hostTables()).filter((name) => name.startsWith(HOST_TABLE_PREFIX)),
  };
  const live = liveIds();
  const stale = (name: string) => {
    const id = idFromName(name);
    return id !== null && !live.has(id);
  };
  const namespaces = found.namespaces.filter(stale);
  const links = found.links.filter(stale);
  const tables = found.tables.filter(stale);

  const killed = await Promise.all(
    namespaces.map((netns) =>
      killProcessesIn(netns).catch((error: unknown) => {
        log?.warn({ err: error, netns }, 'cannot empty a stale namespace');
        return 0;
      }),
    ),
  );
  const lines = [
    ...namespaces.map((netns) => `netns del ${netns}`),
    ...links.map((link) => `link del ${link}`),
  ];
  if (lines.length > 0) await ipBatch(lines, undefined, { allowFailure: true });
  for (const table of tables) await run('nft', ['delete', 'table', 'inet', table], { allowFailure: true });
  const rules = await removeStaleRules();
  forgetDeadOwners();
  restoreForwardingWhenUnused();

  const report = { namespaces, links, tables, rules, processes: killed.reduce((sum, count) => sum + count, 0) };
  if (namespaces.length + links.length + tables.length + rules > 0) log?.warn(report, 'removed stale task networks');
  return report;
}

/** Removes one task's leftovers (a crashed earlier run with the same id), whatever their owner. */
export async function removeLeftovers(names: TaskNames): Promise<void> {
  const namespaces = [names.machineNetns, names.gatewayNetns].filter((netns) => existsSync(`/run/netns/${netns}`));
  await Promise.all(namespaces.map((netns) => killProcessesIn(netns)));
  const lines = namespaces.map((netns) => `netns del ${netns}`);
  if (existsSync(`/sys/class/net/${names.hostLink}`)) lines.push(`link del ${names.hostLink}`);
  if (lines.length > 0) await ipBatch(lines, undefined, { allowFailure: true });
  await run('nft', ['delete', 'table', 'inet', names.hostTable], { allowFailure: true });
}

function listDir(path: string): string[] {
  try {
    return readdirSync(path);
  } catch {
    return [];
  }
}

async function hostTables(): Promise<string[]> {
  const { stdout } = await run('nft', ['-j', 'list', 'tables', 'inet'], { allowFailure: true });
  try {
    const parsed = JSON.parse(stdout) as { nftables: { table?: { name: string } }[] };
    return parsed.nftables.flatMap((entry) => (entry.table ? [entry.table.name] : []));
  } catch {
    return [];
  }
}

/** Policy rules into nestbox's routing table whose uplink no longer exists. */
async function removeStaleRules(): Promise<number> {
  const { stdout } = await run('ip', ['-j', 'rule', 'show'], { allowFailure: true });
  const rules = parseJson<{ table?: string; src?: string; srclen?: number; priority?: number }[]>(stdout, []);
  const ours = rules.filter((rule) => rule.table === String(ROUTE_TABLE) && rule.src);
  if (ours.length === 0) return 0;
  const liveSubnets = new Set(await uplinkSubnets());
  const stale = ours.filter((rule) => !liveSubnets.has(`${rule.src}/${rule.srclen}`));
  const lines = stale.map((rule) => `rule del from ${rule.src}/${rule.srclen} lookup ${ROUTE_TABLE} priority ${rule.priority}`);
  if (stale.length === ours.length) lines.push(`route flush table ${ROUTE_TABLE}`);
  if (lines.length > 0) await ipBatch(lines, undefined, { allowFailure: true });
  return stale.length;
}

async function uplinkSubnets(): Promise<string[]> {
  const { stdout } = await run('ip', ['-j', '-4', 'addr', 'show'], { allowFailure: true });
  const links = parseJson<{ ifname: string; addr_info?: { local: string; prefixlen: number }[] }[]>(stdout, []);
  return links
    .filter((link) => link.ifname.startsWith(HOST_LINK_PREFIX))
    .flatMap((link) => (link.addr_info ?? []).map((info) => subnetOf(info.local, info.prefixlen)));
}

function subnetOf(address: string, prefixLength: number): string {
  const value = address.split('.').reduce((total, octet) => total * 256 + Number(octet), 0);
  const network = prefixLength === 0 ? 0 : (value & (0xffffffff << (32 - prefixLength))) >>> 0;
  return `${[network >>> 24, (network >>> 16) & 255, (network >>> 8) & 255, network & 255].join('.')}/${prefixLength}`;
}

function parseJson<T>(text: string, fallback: T): T {
  try {
    return JSON.parse(text) as T;
  } catch {
    return fallback;
  }
}
