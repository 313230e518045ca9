import assert from 'node:assert/strict';
import { join } from 'node:path';
import { behaviorModule } from '../../src/processing/modules/behavior.js';
import type { ProcessingInput } from '../../src/processing/types.js';
import { behaviorStreams } from '../../src/report/behavior-streams.js';
import { foldEventLog } from '../../src/report/event-log.js';
import { EVENTS_FILE } from '../../src/report/events.js';
import type { BehaviorSection } from '../../src/report/report-types.js';
import { readSupervisorRecord } from '../../src/report/supervisor-log.js';
import type { AnalysisPaths } from '../../src/storage/layout.js';

/**
 * A task folder's behaviour section the way the pipeline makes it: the behaviour module's fold fed in the
 * one pass over the log and the streams beside it, then the module's run (no capture, default options).
 */
export async function behaviorSectionOf(paths: AnalysisPaths): Promise<BehaviorSection> {
  const input = { paths, task: { options: '' }, capture: async () => undefined, supervisorRecord: () => readSupervisorRecord(paths.supervisorLog) } as unknown as ProcessingInput;
  const [outcome] = (await foldEventLog(join(paths.dir, EVENTS_FILE), [behaviorModule.foldLog!(input)!], await behaviorStreams(paths))) ?? [];
  assert.ok(outcome?.ok, 'the behaviour fold ran');
  return (await behaviorModule.run(input, outcome.value as never))!;
}
