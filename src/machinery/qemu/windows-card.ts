import { unavailable } from '../../errors.js';
import type { AgentClient } from './agent-client.js';

/**
 * The analysis card of a Windows guest, given the machine's place in the task network through its
 * agent, as nestbox configures a Linux guest's with `ip`. The card is found by its MAC address in
 * `getmac`'s listing (Windows 7 and 10 both have it), then set with `netsh` (its positional forms, which
 * Windows 7 knows too). Each task's network has its own addresses, so a guest cannot keep one of its own.
 */
export interface WindowsCard {
  mac: string;
  address: string;
  prefix: number;
  gateway: string;
  dns: string;
  /** A second address on the card, for the result link (result-link.ts). */
  resultLink?: { address: string; prefix: number };
}

export async function configureWindowsCard(agent: AgentClient, card: WindowsCard): Promise<void> {
  const listing = await agent.execute('getmac /v /fo csv /nh');
  const name = connectionNamed(listing.stdout ?? '', card.mac);
  if (!name) throw unavailable(`the Windows guest has no network card with the analysis card's address ${card.mac}`, { context: { mac: card.mac } });
  await agent.execute(`netsh interface ipv4 set address name="${name}" static ${card.address} ${netmask(card.prefix)} ${card.gateway}`);
  await agent.execute(`netsh interface ipv4 set dnsservers name="${name}" static ${card.dns} primary`);
  const link = card.resultLink;
  if (link) await agent.execute(`netsh interface ipv4 add address name="${name}" ${link.address} ${netmask(link.prefix)}`);
}

/** The connection name (first column) of the card whose physical address (third column) is `mac`. */
export function connectionNamed(csv: string, mac: string): string | null {
  const wanted = mac.replaceAll(':', '-').toUpperCase();
  for (const line of csv.split(/\r?\n/)) {
    const columns = csvColumns(line);
    if (columns[2]?.toUpperCase() === wanted && columns[0]) return columns[0];
  }
  return null;
}

/** getmac quotes every column and never a quote inside one. */
function csvColumns(line: string): string[] {
  return [...line.matchAll(/"([^"]*)"/g)].map((match) => match[1]!);
}

function netmask(prefix: number): string {
  const bits = prefix === 0 ? 0 : (0xffffffff << (32 - prefix)) >>> 0;
  return [24, 16, 8, 0].map((shift) => (bits >>> shift) & 255).join('.');
}
