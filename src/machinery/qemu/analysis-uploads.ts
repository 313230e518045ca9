import { createHash, type Hash } from 'node:crypto';
import { closeSync, openSync, readFileSync, renameSync, rmSync, writeFileSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import type { AnalysisPaths } from '../../storage/layout.js';
import { DroppedFileBudget, type DroppedFileLimits, type ListedVerdict } from '../dropped/budget.js';
import { droppedEntry, type DroppedEntry } from '../dropped/entry.js';
import { storedName } from '../dropped/stored-name.js';
import { droppedFileWarnings } from '../dropped/warnings.js';
import { MAX_SUPERVISOR_RECORD_BYTES, supervisorRecordLines } from './supervisor-record.js';
import type { UploadHandler, UploadHeader } from './upload-stream.js';

/**
 * Where the guest's uploads land in the analysis folder, as Cuckoo's result server lays them out:
 * dropped files as files/<first 16 hex of sha256>_<name>, process dumps as memory/<pid>-<n>.dmp, and a
 * files.json line for each; the supervisor's record as logs/supervisor.jsonl, as a linux machine writes it. The guest chooses nothing on the host: names are made here, sizes and
 * counts are capped. Dropped files follow the task's `dropped_files` limits, enforced here again
 * whatever the guest sent; process dumps follow the machine's upload limits.
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
  /** Bytes still to be written; the rest of the upload is read and forgotten. */
  room: number;
  written: number;
  /** Dropped files: what the budget granted. */
  verdict?: ListedVerdict;
}

export class AnalysisUploads implements UploadHandler {
  readonly entries: Array<FilesJsonLine | DroppedEntry> = [];
  private readonly problems: string[] = [];
  private readonly droppedEntries: DroppedEntry[] = [];
  private readonly dropped: DroppedFileBudget;
  private current: Current | null = null;
  private dumps = 0;
  private dumpBytes = 0;
  private supervisorRecord = false;
  private counter = 0;
  private readonly dumpsPerPid = new Map<number, number>();
  private finishedResolve!: () => void;
  /** Resolves when the guest said it has nothing more to send (or the stream broke). */
  readonly done = new Promise<void>((resolve) => (this.finishedResolve = resolve));

  constructor(
    private readonly paths: AnalysisPaths,
    private readonly limits: UploadLimits,
    droppedLimits: DroppedFileLimits,
  ) {
    this.dropped = new DroppedFileBudget(droppedLimits);
  }

  /** What the task's errors should show: refused uploads, and dropped files not kept whole. */
  get warnings(): string[] {
    return [...this.problems, ...droppedFileWarnings(this.droppedEntries, this.dropped.unlisted, this.dropped.limits)];
  }

  begin(header: UploadHeader): boolean {
    if (header.kind === 'supervisor') return this.beginSupervisorRecord(header);
    return header.kind === 'dropped' ? this.beginDropped(header) : this.beginDump(header);
  }

  data(chunk: Buffer): void {
    const current = this.current;
    if (!current || current.room === 0) return;
    const kept = chunk.subarray(0, current.room);
    writeSync(current.fd, kept);
    current.hash.update(kept);
    current.room -= kept.length;
    current.written += kept.length;
  }

  end(): void {
    const current = this.current;
    if (!current) return;
    this.current = null;
    closeSync(current.fd);
    if (current.header.kind === 'supervisor') this.endSupervisorRecord(current);
    else if (current.header.kind === 'dropped') this.endDropped(current);
    else this.endDump(current);
  }

  finished(): void {
    this.finishedResolve();
  }

  broken(reason: string): void {
    this.problems.push(`the guest's upload stream broke: ${reason}`);
    this.abandon();
    this.finishedResolve();
  }

  /** Drops a half-received upload (the machine stopped in the middle of it). */
  abandon(): void {
    if (!this.current) return;
    const { header } = this.current;
    this.problems.push(`${uploadName(header)} arrived incomplete: not kept`);
    closeSync(this.current.fd);
    rmSync(this.current.temp, { force: true });
    this.current = null;
  }

  /** The guest announces the file's real size; it sends at most what its copy of the limits grants. */
  private beginDropped(header: UploadHeader): boolean {
    const size = realSize(header);
    const verdict = this.dropped.take(size, header.size);
    if (!verdict.listed) return false;
    if (verdict.keepBytes === 0 && size > 0) {
      this.recordDropped(droppedEntry({ filepath: header.path!, size, stored: null, cut: verdict.cut }, this.dropped.limits));
      return false;
    }
    this.open(header, this.paths.files, verdict.keepBytes, verdict);
    return true;
  }

  private endDropped({ header, temp, hash, written, verdict }: Current): void {
    const sha256 = hash.digest('hex');
    const name = storedName(sha256, header.path!);
    renameSync(temp, join(this.paths.files, name));
    const size = realSize(header);
    const stored = { path: `files/${name}`, bytes: written, sha256 };
    this.recordDropped(droppedEntry({ filepath: header.path!, size, stored, cut: verdict!.cut }, this.dropped.limits));
  }

  private recordDropped(entry: DroppedEntry): void {
    this.droppedEntries.push(entry);
    this.entries.push(entry);
  }

  private beginDump(header: UploadHeader): boolean {
    const refusal = this.dumpRefusal(header);
    if (refusal) {
      this.problems.push(refusal);
      return false;
    }
    this.dumps++;
    this.dumpBytes += header.size;
    this.open(header, this.paths.memory, header.size);
    return true;
  }

  private endDump({ header, temp }: Current): void {
    const pid = header.pid!;
    const n = (this.dumpsPerPid.get(pid) ?? 0) + 1;
    this.dumpsPerPid.set(pid, n);
    renameSync(temp, join(this.paths.memory, `${pid}-${n}.dmp`));
    this.entries.push({ path: `memory/${pid}-${n}.dmp`, filepath: null, pids: [pid] });
  }

  /** One record per task, within its size cap. */
  private beginSupervisorRecord(header: UploadHeader): boolean {
    if (this.supervisorRecord || header.size > MAX_SUPERVISOR_RECORD_BYTES) {
      this.problems.push(`the supervisor's record of ${header.size} bytes not kept: one of at most ${MAX_SUPERVISOR_RECORD_BYTES} bytes per task`);
      return false;
    }
    this.supervisorRecord = true;
    this.open(header, this.paths.logs, header.size);
    return true;
  }

  private endSupervisorRecord({ temp }: Current): void {
    writeFileSync(this.paths.supervisorLog, supervisorRecordLines(readFileSync(temp, 'utf8')));
    rmSync(temp, { force: true });
  }

  private open(header: UploadHeader, dir: string, room: number, verdict?: ListedVerdict): void {
    const temp = join(dir, `.upload-${++this.counter}`);
    this.current = { header, temp, fd: openSync(temp, 'w', 0o644), hash: createHash('sha256'), room, written: 0, ...(verdict ? { verdict } : {}) };
  }

  private dumpRefusal(header: UploadHeader): string | null {
    const what = `memory dump of process ${header.pid}`;
    if (this.dumps >= this.limits.maxFiles) return `${what} not kept: more than ${this.limits.maxFiles} uploads`;
    if (header.size > this.limits.maxFileBytes) return `${what} not kept: ${header.size} bytes is over the limit of ${this.limits.maxFileBytes}`;
    if (this.dumpBytes + header.size > this.limits.maxTotalBytes) return `${what} not kept: the uploads would pass ${this.limits.maxTotalBytes} bytes`;
    return null;
  }
}

/** A dropped file's size in the machine: what the guest announces, and never less than it sends. */
function realSize(header: UploadHeader): number {
  return Math.max(header.fileSize ?? header.size, header.size);
}

function uploadName(header: UploadHeader): string {
  if (header.kind === 'supervisor') return "the supervisor's record";
  return header.kind === 'dropped' ? `dropped file ${header.path}` : `memory dump of process ${header.pid}`;
}
