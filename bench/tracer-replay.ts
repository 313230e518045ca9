import { mkdtemp, rm } from 'node:fs/promises';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { pino } from 'pino';
import { EventsWriter } from '../src/machinery/host/tracer/events-writer.js';
import { MonitorLoader } from '../src/machinery/host/tracer/monitor-loader.js';
import { ReorderBuffer } from '../src/machinery/host/tracer/reorder-buffer.js';
import { sampleDecoder } from '../src/machinery/host/tracer/sample-scope.js';
import type { TraceRecord } from '../src/machinery/host/tracer/trace-records.js';
import type { BehaviorEvent } from '../src/report/events.js';
import { createTestCgroup, readRecordsFile, runInCgroup } from '../test/fixtures/tracer-harness.js';

/**
 * What the service's side of the monitor costs per record, stage by stage, without the noise of a
 * shared machine's wall time: the records of one real `find /usr` under nestbox's monitor are captured
 * once, then replayed through each stage again and again, and the CPU time of each stage printed (the
 * least of the replays: what the code costs, not what the neighbours did meanwhile).
 *
 *   node dist/bench/tracer-replay.js [replays=7]
 */
const REPLAYS = Number(process.argv[2] ?? 7);
/** In service, settled records are released every 200 ms; a find of ~64k records runs about a second. */
const RELEASE_EVERY = 8192;
const REORDER_WINDOW_SECONDS = 0.25;

const log = pino({ level: process.env.NESTBOX_BENCH_LOG ?? 'warn' });
const scratch = await mkdtemp(join(tmpdir(), 'nestbox-bench-replay-'));

/** The records of one `find /usr` under the monitor, as the loader hands them to the service. */
async function capture(): Promise<TraceRecord[]> {
  const loader = await MonitorLoader.launch(log);
  const cgroup = await createTestCgroup();
  try {
    const recordsPath = await loader.arm(cgroup.path);
    await runInCgroup(cgroup.path, ['find', '/usr', '-name', 'nestbox-none']);
    const { lost } = await loader.disarm();
    if (lost > 0) console.log(`(the capture lost ${lost} records)`);
    return await readRecordsFile(recordsPath);
  } finally {
    await cgroup.remove();
    await loader.discard();
  }
}

function reorder(records: TraceRecord[]): number {
  let released = 0;
  const buffer = new ReorderBuffer<TraceRecord>(REORDER_WINDOW_SECONDS, () => released++);
  records.forEach((record, i) => {
    buffer.push(record);
    if (i % RELEASE_EVERY === 0) buffer.releaseSettled();
  });
  buffer.releaseAll();
  return released;
}

/** The events of the records; `keep` false: only counted, as in service each is written and let go. */
function decode(records: TraceRecord[], keep = true): BehaviorEvent[] {
  const events: BehaviorEvent[] = [];
  const decoder = sampleDecoder((event) => void (keep && events.push(event)), undefined, { belowInit: false });
  for (const record of records) decoder.record(record);
  decoder.finish(records.at(-1)?.ts ?? 0);
  return events;
}

/** The events file's lines, as the writer makes them, without the file. */
function serialize(events: BehaviorEvent[]): number {
  let bytes = 0;
  for (let i = 0; i < events.length; i += 512) {
    bytes += Buffer.byteLength(
      events
        .slice(i, i + 512)
        .map((event) => `${JSON.stringify(event)}\n`)
        .join(''),
    );
  }
  return bytes;
}

/** Every stage as in service: reorder, decode, write the events file. */
async function pipeline(records: TraceRecord[]): Promise<number> {
  const writer = await EventsWriter.open(join(scratch, 'events.jsonl'));
  const decoder = sampleDecoder((event) => writer.write(event), undefined, { belowInit: false });
  const buffer = new ReorderBuffer<TraceRecord>(REORDER_WINDOW_SECONDS, (record) => decoder.record(record));
  records.forEach((record, i) => {
    buffer.push(record);
    if (i % RELEASE_EVERY === 0) {
      buffer.releaseSettled();
      writer.flush();
    }
  });
  buffer.releaseAll();
  decoder.finish(records.at(-1)?.ts ?? 0);
  await writer.close();
  return writer.count;
}

/** The least CPU time (ms, this process) of `REPLAYS` runs of `stage`. */
async function cpuMs(stage: () => unknown): Promise<number> {
  let least = Number.POSITIVE_INFINITY;
  for (let i = 0; i < REPLAYS; i++) {
    const since = process.cpuUsage();
    await stage();
    const used = process.cpuUsage(since);
    least = Math.min(least, (used.user + used.system) / 1000);
  }
  return least;
}

try {
  const records = await capture();
  const events = decode(records);
  console.log(`find /usr: ${records.length} records, ${events.length} events; ${REPLAYS} replays (load average ${loadavg().map((load) => load.toFixed(2)).join(' ')})`);
  const stages: Array<[string, () => unknown]> = [
    ['reorder', () => reorder(records)],
    ['decode', () => decode(records, false)],
    ['serialize', () => serialize(events)],
    ['all, with the file', () => pipeline(records)],
  ];
  for (const [name, stage] of stages) console.log(`  ${name.padEnd(20)} ${(await cpuMs(stage)).toFixed(0).padStart(5)} ms CPU`);
} finally {
  await rm(scratch, { recursive: true, force: true });
}
