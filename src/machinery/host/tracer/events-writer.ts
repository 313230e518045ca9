import { createWriteStream, type WriteStream } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import { dirname } from 'node:path';
import { once } from 'node:events';
import type { BehaviorEvent } from '../../../report/events.js';

/** Appends behaviour events to the events file as JSON lines, batching small writes. */
export class EventsWriter {
  private batch: string[] = [];
  private failure: Error | null = null;
  count = 0;

  private constructor(private readonly stream: WriteStream) {
    stream.on('error', (error) => (this.failure = error));
  }

  static async open(path: string): Promise<EventsWriter> {
    await mkdir(dirname(path), { recursive: true });
    const stream = createWriteStream(path, { flags: 'w' });
    await once(stream, 'open');
    return new EventsWriter(stream);
  }

  write(event: BehaviorEvent): void {
    this.batch.push(`${JSON.stringify(event)}\n`);
    this.count++;
    if (this.batch.length >= 512) this.flush();
  }

  flush(): void {
    if (this.batch.length === 0) return;
    this.stream.write(this.batch.join(''));
    this.batch = [];
  }

  /** Writes what is left; the file is complete when this resolves. */
  async close(): Promise<void> {
    this.flush();
    this.stream.end();
    await once(this.stream, 'close');
    if (this.failure) throw this.failure;
  }
}
