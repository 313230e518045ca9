import { closeSync, createWriteStream, openSync, readSync, rmSync, writeSync, type WriteStream } from 'node:fs';
import { once } from 'node:events';
import { createServer, type Server, type Socket } from 'node:net';
import { join } from 'node:path';
import type { AnalysisPaths } from '../../storage/layout.js';
import type { DroppedFileLimits } from '../dropped/budget.js';
import { AnalysisUploads, type UploadLimits } from './analysis-uploads.js';
import type { UploadHeader } from './upload-stream.js';

/**
 * The host end of Cuckoo 2.0.7's result server protocol, which Cuckoo's Windows analyzer and monitor
 * speak: each TCP connection opens with one line naming what follows, then the bytes until it closes.
 *   LOG              the analyzer's log: analysis.log
 *   BSON <pid>       a monitored process's behaviour log, kept raw: logs/<pid>.bson
 *   FILE [2]         one file: a line with where it goes (files/..., memory/..., shots/..., buffer/...,
 *                    extracted/...), for version 2 a line with its path in the guest and one with pids
 * One server per task, so every connection is that task's. The guest chooses nothing on the host:
 * dropped files and memory dumps are named and capped as a Linux guest's are (analysis-uploads.ts);
 * screenshots are not taken from the guest (nestbox takes them from the machine's display).
 */
export interface CuckooResultServerOptions {
  paths: AnalysisPaths;
  uploads: UploadLimits;
  droppedFiles: DroppedFileLimits;
  logLimitBytes: number;
  /** The behaviour logs together stop growing past this: a guest could flood them. */
  behaviourLimitBytes: number;
}

export interface ResultServerSummary {
  uploads: AnalysisUploads;
  warnings: string[];
}

const MAX_LINE_BYTES = 4096;
const FILE_FOLDERS = new Set(['files', 'shots', 'buffer', 'extracted', 'memory']);

export class CuckooResultServer {
  private readonly sockets = new Set<Socket>();
  private readonly handlers = new Set<Promise<void>>();
  private readonly warnings: string[] = [];
  private readonly uploads: AnalysisUploads;
  private analysisLog: WriteStream | null = null;
  private logBytes = 0;
  private behaviourBytes = 0;
  private counter = 0;
  /** close() has begun: a connection ending now was cut, not finished by the guest. */
  private closing = false;

  private constructor(
    private readonly server: Server,
    private readonly options: CuckooResultServerOptions,
  ) {
    this.uploads = new AnalysisUploads(options.paths, options.uploads, options.droppedFiles);
  }

  /** Listens on a TCP address, or on a Unix socket (what a forwarder in the task network connects to). */
  static async listen(where: { host: string; port: number } | { path: string }, options: CuckooResultServerOptions): Promise<CuckooResultServer> {
    const server = createServer();
    const results = new CuckooResultServer(server, options);
    server.on('connection', (socket) => results.accept(socket));
    if ('path' in where) server.listen(where.path);
    else server.listen(where.port, where.host);
    await once(server, 'listening');
    return results;
  }

  /** The TCP port it listens on (0 for a Unix socket). */
  get port(): number {
    const address = this.server.address();
    return typeof address === 'object' && address ? address.port : 0;
  }

  /** Stops listening, ends the connections still open (the guest is stopped by now) and says what arrived. */
  async close(): Promise<ResultServerSummary> {
    this.closing = true;
    const closed = new Promise((resolve) => this.server.close(resolve));
    for (const socket of this.sockets) socket.destroy();
    await Promise.all([closed, ...this.handlers]);
    if (this.analysisLog) await new Promise((resolve) => this.analysisLog!.end(resolve));
    return { uploads: this.uploads, warnings: [...this.warnings, ...this.uploads.warnings] };
  }

  private accept(socket: Socket): void {
    this.sockets.add(socket);
    const handled = this.handle(socket)
      .catch((error: unknown) => {
        // A log cut by the end of the task keeps what arrived; a cut file upload says so itself.
        if (this.closing && (error as NodeJS.ErrnoException).code === 'ERR_STREAM_PREMATURE_CLOSE') return;
        this.warnings.push(this.closing ? (error as Error).message : `a result connection from the guest was refused: ${(error as Error).message}`);
      })
      .finally(() => {
        socket.destroy();
        this.sockets.delete(socket);
        this.handlers.delete(handled);
      });
    this.handlers.add(handled);
  }

  private async handle(socket: Socket): Promise<void> {
    socket.on('error', () => undefined);
    const incoming = new Incoming(socket);
    const header = await incoming.line();
    if (header === null) return;
    const [command, version] = header.trim().split(/\s+/);
    if (command === 'LOG') return this.receiveLog(incoming);
    if (command === 'BSON') return this.receiveBehaviour(incoming, version);
    if (command === 'FILE') return this.receiveFile(incoming, version === '2');
    throw new Error(`unknown result protocol ${JSON.stringify(header.slice(0, 100))}`);
  }

  private async receiveLog(incoming: Incoming): Promise<void> {
    this.analysisLog ??= createWriteStream(this.options.paths.analysisLog, { flags: 'a' });
    for await (const chunk of incoming.rest()) {
      const room = this.options.logLimitBytes - this.logBytes;
      if (room > 0) this.analysisLog.write(chunk.subarray(0, room));
      this.logBytes += chunk.length;
    }
  }

  /** Cuckoo's monitor logs in BSON, kept as it came: processing decodes it (report/monitor-log.ts). */
  private async receiveBehaviour(incoming: Incoming, pidText: string | undefined): Promise<void> {
    const pid = Number(pidText);
    if (!Number.isSafeInteger(pid) || pid < 0) throw new Error(`a behaviour log without a process id (${JSON.stringify(pidText ?? '')})`);
    const out = createWriteStream(join(this.options.paths.logs, `${pid}.bson`), { flags: 'a' });
    let cut = false;
    for await (const chunk of incoming.rest()) {
      const room = this.options.behaviourLimitBytes - this.behaviourBytes;
      if (room < chunk.length) cut = true;
      if (room > 0) out.write(chunk.subarray(0, room));
      this.behaviourBytes += Math.min(chunk.length, Math.max(room, 0));
    }
    await new Promise((resolve) => out.end(resolve));
    if (cut) this.warnings.push(`the behaviour log of process ${pid} was cut at the limit of ${this.options.behaviourLimitBytes} bytes`);
  }

  private async receiveFile(incoming: Incoming, withMetadata: boolean): Promise<void> {
    const where = await incoming.line();
    const filepath = withMetadata ? await incoming.line() : null;
    const pids = withMetadata ? ((await incoming.line()) ?? '').split(/\s+/).filter(Boolean).map(Number).filter(Number.isSafeInteger) : [];
    const [folder, name] = uploadPlace(where ?? '');
    const temp = join(this.options.paths.dir, `.cuckoo-upload-${++this.counter}`);
    const fd = openSync(temp, 'w', 0o600);
    let received = 0;
    try {
      for await (const chunk of incoming.rest()) {
        const room = this.options.uploads.maxFileBytes - received;
        if (room > 0) writeAll(fd, chunk.subarray(0, room));
        received += chunk.length;
      }
      // Cuckoo's protocol ends an upload with the connection: one cut by the end of the task is incomplete.
      if (this.closing) throw new Error('cut');
    } catch (error) {
      rmSync(temp, { force: true });
      throw this.closing ? new Error(`the upload to ${where} was still arriving when the task ended: not kept`) : error;
    } finally {
      closeSync(fd);
    }
    try {
      const kept = Math.min(received, this.options.uploads.maxFileBytes);
      const header = this.uploadHeader(folder, name, filepath || name, pids, kept, received);
      if (header) feedUpload(this.uploads, header, temp);
    } finally {
      rmSync(temp, { force: true });
    }
  }

  private uploadHeader(folder: string, name: string, filepath: string, pids: number[], size: number, received: number): UploadHeader | null {
    if (folder === 'memory') {
      const pid = pids[0] ?? Number.parseInt(name, 10);
      if (Number.isSafeInteger(pid)) return { kind: 'procmem', size, pid };
      this.warnings.push(`a memory dump ${name} of no known process was not kept`);
      return null;
    }
    if (folder === 'files' || folder === 'extracted' || folder === 'buffer') return { kind: 'dropped', size, path: filepath, fileSize: received };
    return null;
  }
}

/** Where an upload asks to go: one of Cuckoo's result folders and a file name in it. */
function uploadPlace(where: string): [string, string] {
  const parts = where.replaceAll('\\', '/').split('/');
  const folder = parts[0] ?? '';
  const name = parts.slice(1).join('_').replace(/[\u0000:]/g, 'X');
  if (!FILE_FOLDERS.has(folder) || !name) throw new Error(`an upload to ${JSON.stringify(where.slice(0, 200))}, outside Cuckoo's result folders`);
  return [folder, name];
}

/** Hands a received file to the uploads in one go, so that uploads of parallel connections never interleave. */
function feedUpload(uploads: AnalysisUploads, header: UploadHeader, temp: string): void {
  if (!uploads.begin(header)) return;
  const fd = openSync(temp, 'r');
  const buffer = Buffer.alloc(1 << 20);
  try {
    for (let read = readSync(fd, buffer); read > 0; read = readSync(fd, buffer)) uploads.data(buffer.subarray(0, read));
  } finally {
    closeSync(fd);
  }
  uploads.end();
}

function writeAll(fd: number, data: Buffer): void {
  for (let offset = 0; offset < data.length; ) offset += writeSync(fd, data.subarray(offset));
}

/** A connection read as lines (its header) and then as the bytes that remain. */
class Incoming {
  private buffer = Buffer.alloc(0);
  private readonly chunks: AsyncIterator<Buffer>;

  constructor(socket: Socket) {
    this.chunks = socket[Symbol.asyncIterator]() as AsyncIterator<Buffer>;
  }

  /** The next line without its end; null when the connection closed first. */
  async line(): Promise<string | null> {
    for (;;) {
      const newline = this.buffer.indexOf(10);
      if (newline >= 0) {
        const line = this.buffer.subarray(0, newline).toString('utf8');
        this.buffer = this.buffer.subarray(newline + 1);
        return line.replace(/\r$/, '');
      }
      if (this.buffer.length >= MAX_LINE_BYTES) throw new Error('a header line longer than 4096 bytes');
      const next = await this.chunks.next();
      if (next.done) return null;
      this.buffer = Buffer.concat([this.buffer, next.value]);
    }
  }

  async *rest(): AsyncGenerator<Buffer> {
    if (this.buffer.length > 0) yield this.buffer;
    this.buffer = Buffer.alloc(0);
    for (let next = await this.chunks.next(); !next.done; next = await this.chunks.next()) yield next.value;
  }
}
