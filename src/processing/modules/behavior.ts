import { parseOptions } from '../../db/task-options.js';
import { behaviorFold, type FinishBehavior, type NetworkHints } from '../behavior-log.js';
import { answeredCalls } from '../../report/supervisor-log.js';
import type { ProcessingInput, ProcessingModule } from '../types.js';

/**
 * Processes, process tree, per-process and overall summaries, API statistics and anomalies from the
 * tracer's event log. Host names and URLs come from the capture and are given to the processes whose
 * connections they match. The calls the sample supervisor answered itself (logs/supervisor.jsonl) are
 * counted in apistats. The task option json.calls=0 leaves the calls out, as in Cuckoo.
 */
export const behaviorModule: ProcessingModule<'behavior', FinishBehavior> = {
  key: 'behavior',
  foldLog(input) {
    return behaviorFold({ keepCalls: parseOptions(input.task.options)['json.calls'] !== '0' });
  },
  async run(input, finish) {
    if (!finish) return undefined;
    return finish(await networkHints(input), answeredCalls(await input.supervisorRecord()))?.section;
  },
};

async function networkHints(input: ProcessingInput): Promise<NetworkHints | undefined> {
  // An unreadable capture is the network module's failure to report; behaviour goes on without names.
  const analysis = await input.capture().catch(() => undefined);
  return analysis && { dns: analysis.facts.dns, dnsServers: analysis.facts.dns_servers, urlsByDestination: analysis.urlsByDestination };
}
