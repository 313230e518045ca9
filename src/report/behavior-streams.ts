import type { EventStream } from './event-streams.js';
import { eventsOfKnownProcesses } from './event-streams.js';
import { answeredCallEvents, readSupervisorRecord } from './supervisor-log.js';
import { wineCallStream } from './wine-call-stream.js';
import type { AnalysisPaths } from '../storage/layout.js';

/**
 * What every reading of a task's behaviour log puts among its events: the calls the sample supervisor
 * answered itself (for processes the log shows), and the Windows calls of a Wine task.
 */
export async function behaviorStreams(paths: Pick<AnalysisPaths, 'dir' | 'supervisorLog'>): Promise<EventStream[]> {
  const answered = eventsOfKnownProcesses(answeredCallEvents((await readSupervisorRecord(paths.supervisorLog)).sleeps));
  const wine = await wineCallStream(paths.dir);
  return wine ? [answered, wine] : [answered];
}
