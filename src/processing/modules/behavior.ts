import { parseOptions } from '../../db/task-options.js';
import { behaviorFold, type FinishBehavior, type NetworkHints } from '../behavior-log.js';
import { answeredCalls } from '../../report/supervisor-log.js';
import type { ProcessingInput, ProcessingModule } from '../types.js';
import { type RegistryChanges, registryChanges } from '../../report/wine-registry-diff.js';
import { relayLogCut } from '../../report/wine-call-stream.js';

/**
 * Processes, process tree, per-process and overall summaries, API statistics and anomalies from the
 * tracer's event log. Host names and URLs come from the capture and are given to the processes whose
 * connections they match. The calls the sample supervisor answered itself (logs/supervisor.jsonl) are
 * counted in apistats. A Wine task's Windows calls come among the log's events, and its registry writes
 * also from the registry files saved at the end. The task option json.calls=0 leaves the calls out, as
 * in Cuckoo.
 */
export const behaviorModule: ProcessingModule<'behavior', FinishBehavior> = {
  key: 'behavior',
  foldLog(input) {
    return behaviorFold({ keepCalls: parseOptions(input.task.options)['json.calls'] !== '0' });
  },
  async run(input, finish) {
    if (!finish) return undefined;
    const section = finish(await networkHints(input), answeredCalls(await input.supervisorRecord()))?.section;
    if (!section) return section;
    addRegistryChanges(section.summary, await registryChanges(input.paths.dir));
    const cut = await relayLogCut(input.paths.dir);
    if (cut !== undefined) section.anomaly.push({ category: 'tracer', funcname: 'relay.log', message: `Wine's relay log was cut at ${cut} bytes: later Windows calls are missing` });
    return section;
  },
};

/** A Wine task's registry changes from its saved registry files, beside those its calls showed. */
function addRegistryChanges(summary: Record<string, string[]>, changes: RegistryChanges | undefined): void {
  if (!changes) return;
  for (const [key, paths] of [['regkey_written', changes.written], ['regkey_deleted', changes.deleted]] as const) {
    if (paths.length === 0) continue;
    summary[key] = [...new Set([...(summary[key] ?? []), ...paths])];
  }
}

async function networkHints(input: ProcessingInput): Promise<NetworkHints | undefined> {
  // An unreadable capture is the network module's failure to report; behaviour goes on without names.
  const analysis = await input.capture().catch(() => undefined);
  return analysis && { dns: analysis.facts.dns, dnsServers: analysis.facts.dns_servers, urlsByDestination: analysis.urlsByDestination };
}
