import { open, type FileHandle } from 'node:fs/promises';
import { StringDecoder } from 'node:string_decoder';
import { setTimeout as sleep } from 'node:timers/promises';

const CHUNK = 1 << 20;

/** What is done with the bytes read: given as they come (in a buffer reused for the next read), then ended. */
interface Reader {
  chunk(bytes: Buffer): void;
  end(): void;
}

/**
 * Follows a file another process is writing, like `tail -f`: line by line (one char per byte, or
 * UTF-8), or as the bytes come. Tracers write their output to a file rather than a pipe so that they
 * never wait for us: a pipe that fills while we are busy stops them from emptying the kernel's buffers,
 * which then drop events.
 */
export class FileTail {
  private position = 0;
  private readonly stopping = new AbortController();
  private readonly buffer = Buffer.allocUnsafe(CHUNK);
  private readonly loop: Promise<void>;

  private constructor(
    private readonly file: FileHandle,
    private readonly reader: Reader,
    private readonly idleMs: number,
  ) {
    this.loop = this.follow();
  }

  static async open(path: string, onLine: (line: string) => void, idleMs = 10, encoding: 'latin1' | 'utf8' = 'latin1'): Promise<FileTail> {
    return new FileTail(await open(path, 'r'), lineReader(onLine, encoding), idleMs);
  }

  /** Follows the file's bytes: `onBytes` is given each piece read, valid until it returns. */
  static async openBytes(path: string, onBytes: (bytes: Buffer) => void, idleMs = 10): Promise<FileTail> {
    return new FileTail(await open(path, 'r'), { chunk: onBytes, end: () => undefined }, idleMs);
  }

  get bytesRead(): number {
    return this.position;
  }

  /** Reads what is left (the writer has finished) and closes the file. */
  async end(): Promise<void> {
    this.stopping.abort();
    await this.loop;
    while ((await this.readChunk()) > 0);
    this.reader.end();
    await this.file.close();
  }

  /** Waiting for more does not keep the process alive by itself (a prepared program may idle for long). */
  private async follow(): Promise<void> {
    const { signal } = this.stopping;
    while (!signal.aborted) {
      if ((await this.readChunk()) === 0) await sleep(this.idleMs, undefined, { ref: false, signal }).catch(() => undefined);
    }
  }

  private async readChunk(): Promise<number> {
    const { bytesRead } = await this.file.read(this.buffer, 0, CHUNK, this.position);
    if (bytesRead === 0) return 0;
    this.position += bytesRead;
    this.reader.chunk(this.buffer.subarray(0, bytesRead));
    return bytesRead;
  }
}

/** Lines, a character split between two reads kept whole; the last line is given even without its newline. */
function lineReader(onLine: (line: string) => void, encoding: 'latin1' | 'utf8'): Reader {
  const decoder = new StringDecoder(encoding);
  let partial = '';
  return {
    chunk(bytes) {
      const lines = (partial + decoder.write(bytes)).split('\n');
      partial = lines.pop()!;
      for (const line of lines) onLine(line);
    },
    end() {
      if (partial !== '') onLine(partial);
      partial = '';
    },
  };
}
