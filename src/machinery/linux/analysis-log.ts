import { createWriteStream, type WriteStream } from 'node:fs';
import { once } from 'node:events';

/**
 * The task's analysis.log: what happened inside the machine, in the line format of Cuckoo's analyzer
 * log (`2016-08-25 22:44:58,917 [source] LEVEL: message`). The sample's own output is logged line by
 * line as source `sample`; past `limitBytes` of output the rest is counted, not written, so a chatty
 * sample cannot fill the host disk.
 */
export class AnalysisLog {
  private readonly stream: WriteStream;
  private outputBytes = 0;
  private droppedBytes = 0;
  private partial = '';

  constructor(
    path: string,
    private readonly limitBytes: number,
  ) {
    this.stream = createWriteStream(path, { flags: 'a' });
    this.stream.on('error', () => undefined);
  }

  /** What explains the run without being worth a reader's attention (a step skipped as not needed). */
  debug(message: string, source = 'machine'): void {
    this.line('DEBUG', source, message);
  }

  info(message: string, source = 'machine'): void {
    this.line('INFO', source, message);
  }

  warning(message: string, source = 'machine'): void {
    this.line('WARNING', source, message);
  }

  /** Output of the sample's processes (stdout and stderr), split into lines. */
  output(chunk: Buffer): void {
    if (this.outputBytes >= this.limitBytes) {
      this.droppedBytes += chunk.length;
      return;
    }
    this.outputBytes += chunk.length;
    const lines = (this.partial + chunk.toString('utf8')).split('\n');
    this.partial = lines.pop() ?? '';
    for (const text of lines) this.line('INFO', 'sample', text.slice(0, 4096));
  }

  async close(): Promise<void> {
    if (this.partial) this.line('INFO', 'sample', this.partial.slice(0, 4096));
    this.partial = '';
    if (this.droppedBytes > 0) this.warning(`${this.droppedBytes} more bytes of sample output were not kept`);
    this.droppedBytes = 0;
    if (this.stream.closed || this.stream.destroyed) return;
    this.stream.end();
    await once(this.stream, 'close').catch(() => undefined);
  }

  private line(level: string, source: string, message: string): void {
    if (this.stream.writableEnded) return;
    this.stream.write(`${timestamp(new Date())} [${source}] ${level}: ${message}\n`);
  }
}

/** Local time as `YYYY-MM-DD HH:MM:SS,mmm`, Python logging's default. */
function timestamp(date: Date): string {
  const pad = (value: number, width = 2) => String(value).padStart(width, '0');
  return (
    `${date.getFullYear()}-${pad(date.getMonth() + 1)}-${pad(date.getDate())} ` +
    `${pad(date.getHours())}:${pad(date.getMinutes())}:${pad(date.getSeconds())},${pad(date.getMilliseconds(), 3)}`
  );
}
