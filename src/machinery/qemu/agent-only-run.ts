import { readFile } from 'node:fs/promises';
import { basename } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import type { AnalysisRequest } from '../types.js';
import type { AgentClient } from './agent-client.js';
import { configureWindowsCard } from './windows-card.js';

/**
 * A task on a guest without nestbox's analyzer (one prepared for Cuckoo: its agent only): the sample is
 * stored in the guest's temporary folder and started through the agent, or the URL opened, and the
 * machine runs until the timeout. Only Cuckoo's agent protocol is used, so any guest whose agent speaks
 * it works; nestbox's tests exercise it with the Linux guest, and with a double of Cuckoo's agent in a
 * Windows guest (no Windows guest can be made here).
 */
export interface GuestNetwork {
  mac: string;
  address: string;
  prefix: number;
  gateway: string;
}

export async function runWithAgentOnly(agent: AgentClient, request: AnalysisRequest, network: GuestNetwork | null, signal: AbortSignal): Promise<string[]> {
  const warnings: string[] = [];
  const windows = (await agent.system()) === 'Windows';
  if (network && !windows) await agent.execute(linuxNetworkCommand(network), { shell: true });
  if (network && windows) await configureWindowsCard(agent, { ...network, dns: network.gateway });
  // A reboot task runs no sample: the guest's cold boot started what the original task made persistent.
  if (!request.rebootFrom) {
    const command = request.category === 'url' ? urlCommand(request.url ?? '', windows) : await storeSample(agent, request, windows);
    await agent.execute(command, { shell: true, async: true });
  }
  await sleep(request.timeoutSeconds * 1000, undefined, { signal }).catch(() => warnings.push('the analysis was aborted'));
  return warnings;
}

async function storeSample(agent: AgentClient, request: AnalysisRequest, windows: boolean): Promise<string> {
  const environ = await agent.environ();
  const temp = environ.TEMP ?? environ.TMP ?? (windows ? 'C:\\Windows\\Temp' : '/tmp');
  const name = basename(request.samplePath ?? 'sample').replace(/[\u0000-\u001f/\\:*?"<>|]/g, '_') || 'sample';
  const path = windows ? `${temp}\\${name}` : `${temp}/${name}`;
  await agent.store(path, await readFile(request.samplePath ?? ''));
  return windows ? `start "" "${path}"` : `chmod +x '${path}' && cd '${temp}' && exec '${path}'`;
}

function urlCommand(url: string, windows: boolean): string {
  const quoted = url.replaceAll('"', '%22').replaceAll("'", '%27');
  return windows ? `start "" "${quoted}"` : `curl -sL -o /tmp/download '${quoted}'`;
}

function linuxNetworkCommand({ mac, address, prefix, gateway }: GuestNetwork): string {
  return [
    `card=$(for path in /sys/class/net/*; do [ "$(cat $path/address)" = "${mac}" ] && echo "\${path##*/}"; done; true)`,
    'test -n "$card"',
    // No IPv6 on the analysis card: router solicitations would only clutter the capture.
    `(echo 1 > "/proc/sys/net/ipv6/conf/$card/disable_ipv6" || true)`,
    `ip addr flush dev "$card"`,
    `ip addr add ${address}/${prefix} dev "$card"`,
    `ip link set "$card" up`,
    `ip route replace default via ${gateway} dev "$card"`,
    `echo "nameserver ${gateway}" > /etc/resolv.conf`,
  ].join(' && ');
}
