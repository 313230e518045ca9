import { open, type FileHandle } from 'node:fs/promises';
import { StringDecoder } from 'node:string_decoder';
import { setTimeout as sleep } from 'node:timers/promises';

const CHUNK = 1 << 20;

/**
 * Follows a file another process is writing, line by line (one char per byte, or UTF-8), like `tail -f`.
 * bpftrace writes its output to a file rather than a pipe so that it never waits for us: a pipe that
 * fills while we are busy stops bpftrace from emptying the kernel's buffers, which then drop events.
 */
export class FileTail {
  private position = 0;
  private partial = '';
  private readonly stopping = new AbortController();
  private readonly buffer = Buffer.allocUnsafe(CHUNK);
  private readonly loop: Promise<void>;
  /** Keeps a character split between two reads whole. */
  private readonly decoder: StringDecoder;

  private constructor(
    private readonly file: FileHandle,
    private readonly onLine: (line: string) => void,
    private readonly idleMs: number,
    encoding: 'latin1' | 'utf8',
  ) {
    this.decoder = new StringDecoder(encoding);
    this.loop = this.follow();
  }

  static async open(path: string, onLine: (line: string) => void, idleMs = 10, encoding: 'latin1' | 'utf8' = 'latin1'): Promise<FileTail> {
    return new FileTail(await open(path, 'r'), onLine, idleMs, encoding);
  }

  get bytesRead(): number {
    return this.position;
  }

  /** Reads what is left (the writer has finished) and closes the file. */
  async end(): Promise<void> {
    this.stopping.abort();
    await this.loop;
    while ((await this.readChunk()) > 0);
    if (this.partial !== '') this.onLine(this.partial);
    this.partial = '';
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
    const buffer = this.buffer;
    const { bytesRead } = await this.file.read(buffer, 0, CHUNK, this.position);
    if (bytesRead === 0) return 0;
    this.position += bytesRead;
    const lines = (this.partial + this.decoder.write(buffer.subarray(0, bytesRead))).split('\n');
    this.partial = lines.pop()!;
    for (const line of lines) this.onLine(line);
    return bytesRead;
  }
}
