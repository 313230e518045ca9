import type { BehaviorEvent } from '../report/events.js';
import { CALL_INDEX, type Indexed } from '../report/event-log.js';
import type { Call } from '../report/report-types.js';

const CATEGORY_BY_PREFIX: Record<string, Call['category']> = {
  process: 'process',
  file: 'file',
  net: 'network',
  memory: 'memory',
  module: 'system',
  tracer: 'tracer',
};

/** A behaviour event in Cuckoo's call shape, as signature marks carry it. */
export function callOf(event: BehaviorEvent): Call {
  const { [CALL_INDEX]: _index, ts, pid: _pid, ppid: _ppid, tid, comm: _comm, kind, ...body } = event as Indexed;
  const { ret, ...args } = body as Record<string, unknown>;
  const returnValue = typeof ret === 'number' ? ret : 0;
  return {
    api: kind,
    category: CATEGORY_BY_PREFIX[kind.split('.')[0] ?? ''] ?? 'system',
    time: ts,
    tid,
    status: returnValue >= 0,
    return_value: returnValue,
    arguments: args,
  };
}
