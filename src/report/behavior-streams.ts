import type { EventStream } from './event-streams.js';
import { eventsOfKnownProcesses } from './event-streams.js';
import type { SkippedSleep } from './report-types.js';
import { answeredCallEvents, readSupervisorRecord, type SupervisorRecord } from './supervisor-log.js';
import { monitorLogStreams } from './monitor-log-stream.js';
import { wineCallStream } from './wine-call-stream.js';
import type { AnalysisPaths } from '../storage/layout.js';

/**
 * What every reading of a task's behaviour log puts among its events: the calls the sample supervisor
 * answered itself (for processes the log shows), the Windows calls of a Wine task, and a Windows guest's
 * behaviour logs (Cuckoo's monitor's, a stream per process). `record`: the supervisor's record when the
 * caller has read it already.
 */
export async function behaviorStreams(paths: Pick<AnalysisPaths, 'dir' | 'supervisorLog'>, record?: SupervisorRecord): Promise<EventStream[]> {
  const { sleeps } = record ?? (await readSupervisorRecord(paths.supervisorLog));
  return streamsBeside(paths.dir, sleeps);
}

/**
 * The same streams from the supervisor's answered sleeps and the task folder `dir`; a log read on its own,
 * outside a task folder (dir undefined), has only the answered calls beside it.
 */
export async function streamsBeside(dir: string | undefined, sleeps: readonly SkippedSleep[]): Promise<EventStream[]> {
  const answered = eventsOfKnownProcesses(answeredCallEvents(sleeps));
  if (dir === undefined) return [answered];
  const wine = await wineCallStream(dir);
  return [answered, ...(wine ? [wine] : []), ...(await monitorLogStreams(dir))];
}
