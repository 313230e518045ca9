import type { MachineRow } from '../../src/db/schema.js';
import type { AnalysisRequest, MachineSession, RunResult } from '../../src/machinery/types.js';

/** What every request names; the rest has the defaults of a file task on the fake internet. */
type Required = Pick<AnalysisRequest, 'taskId' | 'paths' | 'log'>;

/** A request for `machine`, as the scheduler hands one to a machinery, for tests that drive machines directly. */
export function analysisRequest(machine: string, fields: Required & Partial<AnalysisRequest>): AnalysisRequest {
  return {
    machine: { name: machine } as MachineRow,
    category: 'file',
    package: '',
    options: {},
    timeoutSeconds: 20,
    enforceTimeout: false,
    memory: false,
    route: 'inetsim',
    clock: new Date().toISOString(),
    ...fields,
  };
}

/** A started session driven as the scheduler drives it: run, stop, collect, and destroyed whatever happened. */
export async function runToCollection(session: MachineSession): Promise<RunResult> {
  try {
    const result = await session.run(new AbortController().signal);
    await session.stop();
    await session.collect();
    return result;
  } finally {
    await session.destroy();
  }
}
