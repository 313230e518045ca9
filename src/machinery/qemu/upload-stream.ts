/**
 * The framing of the guest's upload port: each upload is one JSON header line carrying its `size`,
 * followed by exactly that many bytes. The guest is hostile ground, so every header is checked, sizes are
 * capped, and a malformed header ends the stream instead of being guessed at.
 */
export interface UploadHeader {
  kind: 'dropped' | 'procmem' | 'supervisor' | 'end';
  size: number;
  /** dropped: the file's path in the guest. */
  path?: string;
  /** dropped: the file's size in the guest, as the guest says; `size` bytes of it follow (its first ones). */
  fileSize?: number;
  /** procmem: the process the dump is of. */
  pid?: number;
}

export interface UploadHandler {
  /** A new upload starts; return false to have its bytes skipped. */
  begin(header: UploadHeader): boolean;
  data(chunk: Buffer): void;
  end(): void;
  /** The guest's last upload: nothing more will come. */
  finished(): void;
  /** The stream broke; nothing more is read. */
  broken(reason: string): void;
}

const MAX_HEADER_BYTES = 8192;

export class UploadStream {
  private header = Buffer.alloc(0);
  private remaining = 0;
  private accepting = false;
  private state: 'header' | 'body' | 'stopped' = 'header';

  constructor(private readonly handler: UploadHandler) {}

  push(chunk: Buffer): void {
    let rest = chunk;
    while (rest.length > 0 && this.state !== 'stopped') {
      rest = this.state === 'header' ? this.readHeader(rest) : this.readBody(rest);
    }
  }

  private readHeader(chunk: Buffer): Buffer {
    const newline = chunk.indexOf(10);
    if (newline < 0) {
      this.header = Buffer.concat([this.header, chunk]);
      if (this.header.length > MAX_HEADER_BYTES) this.stop('an upload header is too long');
      return Buffer.alloc(0);
    }
    const line = Buffer.concat([this.header, chunk.subarray(0, newline)]).toString('utf8');
    this.header = Buffer.alloc(0);
    const header = parseHeader(line);
    if (!header) {
      this.stop(`malformed upload header ${JSON.stringify(line.slice(0, 200))}`);
      return Buffer.alloc(0);
    }
    if (header.kind === 'end') {
      this.state = 'stopped';
      this.handler.finished();
      return Buffer.alloc(0);
    }
    this.accepting = this.handler.begin(header);
    this.remaining = header.size;
    this.state = 'body';
    if (this.remaining === 0) this.finishUpload();
    return chunk.subarray(newline + 1);
  }

  private readBody(chunk: Buffer): Buffer {
    const take = Math.min(this.remaining, chunk.length);
    if (this.accepting) this.handler.data(chunk.subarray(0, take));
    this.remaining -= take;
    if (this.remaining === 0) this.finishUpload();
    return chunk.subarray(take);
  }

  private finishUpload(): void {
    if (this.accepting) this.handler.end();
    this.accepting = false;
    this.state = 'header';
  }

  private stop(reason: string): void {
    this.state = 'stopped';
    this.handler.broken(reason);
  }
}

function parseHeader(line: string): UploadHeader | null {
  let value: unknown;
  try {
    value = JSON.parse(line);
  } catch {
    return null;
  }
  if (typeof value !== 'object' || value === null) return null;
  const header = value as Record<string, unknown>;
  const size = header.kind === 'end' ? 0 : header.size;
  if (!Number.isSafeInteger(size) || (size as number) < 0) return null;
  switch (header.kind) {
    case 'end':
      return { kind: 'end', size: 0 };
    case 'dropped':
      return typeof header.path === 'string' ? droppedHeader(header.path, size as number, header.file_size) : null;
    case 'procmem':
      return Number.isSafeInteger(header.pid) ? { kind: 'procmem', size: size as number, pid: header.pid as number } : null;
    case 'supervisor':
      return { kind: 'supervisor', size: size as number };
    default:
      return null;
  }
}

/** A `file_size` that is not a size is left out: the upload then stands for the whole file. */
function droppedHeader(path: string, size: number, fileSize: unknown): UploadHeader {
  const valid = Number.isSafeInteger(fileSize) && (fileSize as number) >= 0;
  return valid ? { kind: 'dropped', size, path, fileSize: fileSize as number } : { kind: 'dropped', size, path };
}
