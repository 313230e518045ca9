import type { EventStream } from './event-streams.js';
import { eventsOfKnownProcesses } from './event-streams.js';
import { answeredCallEvents, readSupervisorRecord, type SupervisorRecord } from './supervisor-log.js';
import { wineCallStream } from './wine-call-stream.js';
import type { AnalysisPaths } from '../storage/layout.js';

/**
 * What every reading of a task's behaviour log puts among its events: the calls the sample supervisor
 * answered itself (for processes the log shows), and the Windows calls of a Wine task. `record`: the
 * supervisor's record when the caller has read it already.
 */
export async function behaviorStreams(paths: Pick<AnalysisPaths, 'dir' | 'supervisorLog'>, record?: SupervisorRecord): Promise<EventStream[]> {
  const { sleeps } = record ?? (await readSupervisorRecord(paths.supervisorLog));
  const answered = eventsOfKnownProcesses(answeredCallEvents(sleeps));
  const wine = await wineCallStream(paths.dir);
  return wine ? [answered, wine] : [answered];
}
