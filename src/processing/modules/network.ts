import { sha256File } from '../fileinfo.js';
import type { NetworkSection } from '../../report/report-types.js';
import type { ProcessingInput, ProcessingModule } from '../types.js';

/** Cuckoo's network section from dump.pcap. Without a capture every list is empty, as when nothing was sent. */
export const networkModule: ProcessingModule<'network'> = {
  key: 'network',
  async run(input) {
    const analysis = await input.capture();
    if (!analysis) return emptyNetwork();
    return { mitm: [], pcap_sha256: await sha256File(input.paths.pcap), ...analysis.facts };
  },
};

/**
 * The addresses configured for the machine and its result server: never contacted hosts. (Linux machines
 * get per-task addresses; their gateway is left out as the private resolver, see network-analysis.ts.)
 */
export function machineAddresses(input: ProcessingInput): string[] {
  const name = input.guest?.name ?? input.task.machine;
  const machine = input.config.machines.find((candidate) => candidate.name === name);
  return machine ? [machine.ip, machine.resultserver_ip] : [];
}

function emptyNetwork(): NetworkSection {
  return { mitm: [], hosts: [], domains: [], dns: [], tcp: [], udp: [], icmp: [], http: [], tls: [], smtp: [], irc: [], dns_servers: [], dead_hosts: [] };
}
