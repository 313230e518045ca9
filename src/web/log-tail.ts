import { open } from 'node:fs/promises';
import { StringDecoder } from 'node:string_decoder';

/**
 * The lines another process appends to a file, read on demand and at most so many bytes at a time, so a
 * writer faster than the reader makes the reader fall behind instead of taking all its time. A line
 * still being written is kept until its end arrives.
 */
export class LogTail {
  #position = 0;
  #partial = '';
  #buffer: Buffer | undefined;
  readonly #decoder = new StringDecoder('utf8');

  constructor(private readonly path: string) {}

  /** The complete lines appended since the last read, from at most `maxBytes`; none while the file does not exist. */
  async read(maxBytes: number): Promise<string[]> {
    let file;
    try {
      file = await open(this.path, 'r');
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return [];
      throw error;
    }
    try {
      const buffer = this.#buffer?.length === maxBytes ? this.#buffer : (this.#buffer = Buffer.allocUnsafe(maxBytes));
      const { bytesRead } = await file.read(buffer, 0, maxBytes, this.#position);
      this.#position += bytesRead;
      const lines = (this.#partial + this.#decoder.write(buffer.subarray(0, bytesRead))).split('\n');
      this.#partial = lines.pop() ?? '';
      return lines;
    } finally {
      await file.close();
    }
  }
}
