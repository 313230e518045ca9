import { createReadStream, existsSync } from 'node:fs';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { EVENTS_FILE } from '../../analysis/events.js';
import { guestJson } from '../../api/serialize.js';
import { formatOptions, parseOptions } from '../../tasks/options.js';
import { epochSeconds } from '../../util/time.js';
import { NESTBOX_VERSION } from '../../version.js';
import type { InfoSection } from '../report-types.js';
import type { ProcessingModule } from '../types.js';

/** Cuckoo's analysisinfo: the task's facts. `score` stays 0 here; the pipeline sets it from the signatures. */
export const infoModule: ProcessingModule<'info'> = {
  key: 'info',
  async run(input) {
    const { task, guest } = input;
    const started = epochSeconds(task.started_on);
    const ended = epochSeconds(task.completed_on);
    const tracer = await tracerFacts(join(input.paths.dir, EVENTS_FILE));
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

/**
 * The tracer's own notes in the event log (its name, events it dropped). Only lines mentioning
 * "tracer." are parsed, so a million-event log costs one quick read.
 */
async function tracerFacts(eventsPath: string): Promise<{ lost: number; name: string | undefined }> {
  const facts = { lost: 0, name: undefined as string | undefined };
  if (!existsSync(eventsPath)) return facts;
  const lines = createInterface({ input: createReadStream(eventsPath, { highWaterMark: 1 << 20 }), crlfDelay: Infinity });
  for await (const line of lines) {
    if (!line.includes('tracer.')) continue;
    try {
      const event = JSON.parse(line) as { kind?: unknown; count?: unknown; tracer?: unknown };
      if (event.kind === 'tracer.lost') facts.lost += Number(event.count) || 0;
      else if (event.kind === 'tracer.info' && typeof event.tracer === 'string') facts.name ??= event.tracer;
    } catch {
      // Unreadable lines are the behaviour module's to report.
    }
  }
  return facts;
}
