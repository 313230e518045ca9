import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { EVENTS_FILE } from '../../analysis/events.js';
import { parseOptions } from '../../tasks/options.js';
import { type NetworkHints, reconstructBehavior } from '../behavior-log.js';
import { analysePcap } from '../network-analysis.js';
import type { ProcessingModule } from '../types.js';
import { machineAddresses } from './network.js';

/**
 * Processes, process tree, per-process and overall summaries, API statistics and anomalies from the
 * tracer's event log. Host names and URLs come from the capture and are given to the processes whose
 * connections they match. The task option json.calls=0 leaves the calls out, as in Cuckoo.
 */
export const behaviorModule: ProcessingModule<'behavior'> = {
  key: 'behavior',
  async run(input) {
    const eventsPath = join(input.paths.dir, EVENTS_FILE);
    if (!existsSync(eventsPath)) return undefined;
    const keepCalls = parseOptions(input.task.options)['json.calls'] !== '0';
    let network: NetworkHints | undefined;
    if (existsSync(input.paths.pcap)) {
      // An unreadable capture is the network module's failure to report; behaviour goes on without names.
      const analysis = await analysePcap(input.paths.pcap, { ignoreHosts: machineAddresses(input) }).catch(() => undefined);
      if (analysis) network = { dns: analysis.facts.dns, dnsServers: analysis.facts.dns_servers, urlsByDestination: analysis.urlsByDestination };
    }
    const result = await reconstructBehavior(eventsPath, { keepCalls, network });
    return result?.section;
  },
};
