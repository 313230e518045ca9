import { createHash, type Hash } from 'node:crypto';
import { closeSync, openSync, renameSync, rmSync, writeSync } from 'node:fs';
import { posix } from 'node:path';
import { join } from 'node:path';
import type { AnalysisPaths } from '../../storage/layout.js';
import type { UploadHandler, UploadHeader } from './upload-stream.js';

/**
 * Where the guest's uploads land in the analysis folder, as Cuckoo's result server lays them out:
 * dropped files as files/<first 16 hex of sha256>_<name>, process dumps as memory/<pid>-<n>.dmp, and a
 * files.json line for each. The guest chooses nothing on the host: names are made here, sizes and
 * counts are capped.
 */
export interface UploadLimits {
  maxFiles: number;
  maxFileBytes: number;
  maxTotalBytes: number;
}

export interface FilesJsonLine {
  path: string;
  filepath: string | null;
  pids: number[];
}

interface Current {
  header: UploadHeader;
  temp: string;
  fd: number;
  hash: Hash;
}

export class AnalysisUploads implements UploadHandler {
  readonly entries: FilesJsonLine[] = [];
  readonly warnings: string[] = [];
  private current: Current | null = null;
  private totalBytes = 0;
  private counter = 0;
  private readonly dumpsPerPid = new Map<number, number>();
  private finishedResolve!: () => void;
  /** Resolves when the guest said it has nothing more to send (or the stream broke). */
  readonly done = new Promise<void>((resolve) => (this.finishedResolve = resolve));

  constructor(
    private readonly paths: AnalysisPaths,
    private readonly limits: UploadLimits,
  ) {}

  begin(header: UploadHeader): boolean {
    const refusal = this.refusal(header);
    if (refusal) {
      this.warnings.push(refusal);
      return false;
    }
    this.totalBytes += header.size;
    const dir = header.kind === 'dropped' ? this.paths.files : this.paths.memory;
    const temp = join(dir, `.upload-${++this.counter}`);
    this.current = { header, temp, fd: openSync(temp, 'w', 0o644), hash: createHash('sha256') };
    return true;
  }

  data(chunk: Buffer): void {
    if (!this.current) return;
    writeSync(this.current.fd, chunk);
    this.current.hash.update(chunk);
  }

  end(): void {
    const current = this.current;
    if (!current) return;
    this.current = null;
    closeSync(current.fd);
    const { header } = current;
    if (header.kind === 'dropped') {
      const sha256 = current.hash.digest('hex');
      const name = `${sha256.slice(0, 16)}_${safeName(posix.basename(header.path!))}`;
      renameSync(current.temp, join(this.paths.files, name));
      this.entries.push({ path: `files/${name}`, filepath: header.path!, pids: [] });
    } else {
      const pid = header.pid!;
      const n = (this.dumpsPerPid.get(pid) ?? 0) + 1;
      this.dumpsPerPid.set(pid, n);
      renameSync(current.temp, join(this.paths.memory, `${pid}-${n}.dmp`));
      this.entries.push({ path: `memory/${pid}-${n}.dmp`, filepath: null, pids: [pid] });
    }
  }

  finished(): void {
    this.finishedResolve();
  }

  broken(reason: string): void {
    this.warnings.push(`the guest's upload stream broke: ${reason}`);
    this.abandon();
    this.finishedResolve();
  }

  /** Drops a half-received upload (the machine stopped in the middle of it). */
  abandon(): void {
    if (!this.current) return;
    const { header } = this.current;
    this.warnings.push(`${header.kind === 'dropped' ? `dropped file ${header.path}` : `memory dump of process ${header.pid}`} arrived incomplete: not kept`);
    closeSync(this.current.fd);
    rmSync(this.current.temp, { force: true });
    this.current = null;
  }

  private refusal(header: UploadHeader): string | null {
    const what = header.kind === 'dropped' ? `dropped file ${header.path}` : `memory dump of process ${header.pid}`;
    if (this.entries.length >= this.limits.maxFiles) return `${what} not kept: more than ${this.limits.maxFiles} uploads`;
    if (header.size > this.limits.maxFileBytes) return `${what} not kept: ${header.size} bytes is over the limit of ${this.limits.maxFileBytes}`;
    if (this.totalBytes + header.size > this.limits.maxTotalBytes) return `${what} not kept: the uploads would pass ${this.limits.maxTotalBytes} bytes`;
    return null;
  }
}

/** File names keep their characters, except those that would break the folder or JSON-lines tools. */
function safeName(name: string): string {
  return name.replace(/[\u0000-\u001f/\\]/g, '_').slice(0, 200) || 'file';
}
