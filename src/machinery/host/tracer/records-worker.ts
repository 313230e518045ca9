import { readlinkSync } from 'node:fs';
import { setPriority } from 'node:os';
import { parentPort } from 'node:worker_threads';
import { FileTail } from './file-tail.js';
import { MonitorFrames } from './monitor-frames.js';
import { RecordPipeline } from './record-pipeline.js';
import type { ToRecordsWorker, FromRecordsWorker } from './records-messages.js';

/**
 * The monitor's records turned into behaviour events, in a thread of its own at low priority. The monitor
 * has already put every record safely in a file; decoding them costs more CPU than the kernel side, and a
 * sample that makes calls as fast as it can must not be slowed by it (a slowdown is what timing checks
 * notice). So the decoding mostly waits for spare CPU and catches up when the sample idles or ends. Not the
 * lowest priority: on a saturated host the live view of a running task would then lag by minutes.
 */
const DECODING_NICE = 10;

const port = parentPort!;
const tell = (message: FromRecordsWorker) => port.postMessage(message);

lowerOwnPriority();

interface Session {
  tail: FileTail;
  pipeline: RecordPipeline;
}

let session: Session | null = null;

port.on('message', (message: ToRecordsWorker) => {
  void handle(message).catch((error: unknown) => tell({ type: 'failed', message: (error as Error).message ?? String(error) }));
});

async function handle(message: ToRecordsWorker): Promise<void> {
  switch (message.type) {
    case 'open': {
      const pipeline = await RecordPipeline.open({ eventsPath: message.eventsPath, sample: message.sample }, message.windowSeconds);
      const frames = new MonitorFrames(
        (record) => {
          if (record.op === 'lost') tell({ type: 'warn', message: 'the monitor lost records', detail: { count: record.count } });
          pipeline.push(record);
        },
        (what) => tell({ type: 'warn', message: 'unreadable records from the monitor', detail: { what } }),
      );
      const tail = await FileTail.openBytes(message.recordsPath, (bytes) => frames.push(bytes));
      session = { tail, pipeline };
      tell({ type: 'opened' });
      return;
    }
    case 'info':
      session?.pipeline.info(message.ts, message.message);
      return;
    case 'close': {
      const closing = session;
      session = null;
      if (closing) {
        await closing.tail.end();
        await closing.pipeline.close(message.now, message.message);
      }
      tell({ type: 'closed' });
      return;
    }
  }
}

/** Niceness is per thread on Linux: this thread's id is the last part of /proc/thread-self. */
function lowerOwnPriority(): void {
  try {
    const tid = Number(readlinkSync('/proc/thread-self').split('/').pop());
    if (Number.isInteger(tid) && tid > 0) setPriority(tid, DECODING_NICE);
  } catch {
    // Decoding at normal priority is slower for the sample, not wrong.
  }
}
