import { guestJson } from '../../report/guest-json.js';
import { formatOptions, parseOptions } from '../../db/task-options.js';
import { epochSeconds } from '../../util/time.js';
import { NESTBOX_VERSION } from '../../version.js';
import { TracerNotes } from '../behavior-log.js';
import type { InfoSection } from '../../report/report-types.js';
import type { ProcessingModule } from '../types.js';

/** Cuckoo's analysisinfo: the task's facts. `score` stays 0 here; the pipeline sets it from the signatures. */
export const infoModule: ProcessingModule<'info', ReturnType<TracerNotes['result']>> = {
  key: 'info',
  foldLog: () => new TracerNotes(),
  async run(input, tracer = { lost: 0, reports: 0, name: undefined }) {
    const { task, guest } = input;
    const started = epochSeconds(task.started_on);
    const ended = epochSeconds(task.completed_on);
    const info: InfoSection = {
      id: task.id,
      version: NESTBOX_VERSION,
      category: task.category,
      package: task.package,
      platform: task.platform,
      custom: task.custom,
      owner: task.owner,
      options: formatOptions(parseOptions(task.options)),
      route: task.route,
      added: epochSeconds(task.added_on)!,
      started,
      ended,
      duration: started !== null && ended !== null ? Math.max(0, Math.round(ended - started)) : -1,
      machine: guest ? guestJson(guest, false) : {},
      score: 0,
      events_lost: tracer.lost,
    };
    if (tracer.name !== undefined) info.tracer = tracer.name;
    return info;
  },
};
