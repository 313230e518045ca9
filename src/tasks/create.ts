import { constants } from 'node:fs';
import { copyFile, link, mkdtemp, rm, stat } from 'node:fs/promises';
import { join } from 'node:path';
import type { AppContext } from '../app.js';
import { encodeList } from '../db/json-columns.js';
import type { NewTask, SampleRow, TaskCategory } from '../db/schema.js';
import type { Db } from '../db/tasks.js';
import { invalidInput, isNestboxError } from '../errors.js';
import { archiveKindOf, archiveLimits, unpackArchive } from '../storage/archives.js';
import type { FileHashes } from '../storage/hashing.js';
import { removeFile, writeHeld } from '../storage/upload.js';
import { nowIso } from '../util/time.js';
import { formatOptions, parseOptions } from '../db/task-options.js';
import { fleetOf, machineFits, runsUnderWine, wishOf, type MachineWish } from '../scheduler/matching.js';
import { fileRefusedUnderWine, URL_REFUSED_UNDER_WINE } from './windows-under-wine.js';
import { downloadByHash } from './virustotal.js';

/**
 * Creating tasks: samples are stored content-addressed in storage/binaries/<sha256> right away (so
 * `/files/get` works for pending samples too), each task gets its own `<tmppath>/<random>/<name>` target
 * (a hard link to the binary), and sample and task rows are written in one transaction. When anything
 * fails, what was created for the request is removed again.
 */

/** Everything a creation request says about the task(s) besides the sample itself. */
export interface TaskParams {
  package: string;
  /** Seconds; 0 means the configured default. */
  timeout: number;
  priority: number;
  options: string;
  machine: string;
  platform: string;
  tags: string[];
  custom: string;
  owner: string;
  /** ISO-8601 time the guest clock is set to. */
  clock: string;
  memory: boolean;
  enforceTimeout: boolean;
}

/** One line of create/submit's `strings`, already classified. */
export type SubmittedString = { kind: 'hash'; hash: string } | { kind: 'url'; url: string } | { kind: 'error'; message: string };

/** A file received for a task, not yet stored. The caller owns `path` and removes it afterwards. */
export interface StagedFile {
  path: string;
  /** File name the task's target gets. */
  name: string;
  hashes: FileHashes;
  /**
   * The content of a small upload held in memory: `path` is not written then. Creation writes it there
   * (and clears this) only when the sample is new, so the caller removes `path` only without it.
   */
  content?: Buffer;
}

export interface SubmitInput {
  /** Uploads in the order their tasks should be created. */
  files: readonly StagedFile[];
  /** The lines of `strings`, in order. */
  strings: readonly SubmittedString[];
}

export interface SubmitResult {
  submitId: number;
  taskIds: number[];
  /** One message per item that did not become a task. */
  errors: string[];
}

interface TypedFile extends StagedFile {
  fileType: string;
}

/** A sample in storage/binaries. */
interface StoredFile extends TypedFile {
  binary: string;
  createdBinary: boolean;
  /** The binary stays whatever other requests do: this one created it, or linked the target from it. */
  binaryCertain: boolean;
}

/** A sample in storage with its task target in place. */
interface PlacedFile extends StoredFile {
  targetDir: string;
  target: string;
}

/** Where a file of a submission was unpacked from: the submitted archive (one object for all its files) and its path inside. */
interface ArchiveOrigin {
  archive: TypedFile;
  member: string;
}

type SubmitItem = { kind: 'file'; file: TypedFile; origin?: ArchiveOrigin } | { kind: 'url'; url: string };

/** An archive task's provenance as its row records it. */
interface ArchiveColumns {
  archive_id: number;
  archive_name: string;
  archive_member: string;
}

/**
 * Where a task may run, as intake found it. Under Wine (platform windows and no Windows machine, so a
 * linux machine runs it) only Windows programs can be its target.
 */
export interface MachineSelection {
  underWine: boolean;
  /** The node of the cluster it is pinned to. */
  node?: string;
}

export function wishOfParams(params: Pick<TaskParams, 'machine' | 'platform' | 'tags'>): MachineWish {
  return wishOf({ machine: params.machine, platform: params.platform, tags: encodeList(params.tags) });
}

export class TaskCreation {
  constructor(private readonly ctx: AppContext) {}

  /**
   * `selection` is where the caller has found the task may run (Cuckoo's distributed `POST /api/task`
   * pins it to a node of the cluster); without it, this node's machines are asked.
   */
  async createFileTask(file: StagedFile, params: TaskParams, options: { unique: boolean; selection?: MachineSelection }): Promise<number> {
    const selection = options.selection ?? (await this.checkMachineSelection(params));
    if (options.unique) await this.refuseKnownSample(file.hashes.sha256);
    const { known, fileType } = await this.identify(file);
    if (selection.underWine) {
      const refused = fileRefusedUnderWine(params.package, { fileName: file.name, fileType });
      if (refused) throw invalidInput(refused, { context: { platform: params.platform, fileType } });
    }
    const placed = known ? await this.placeKnown(file, fileType) : await this.place({ ...file, fileType });
    const pin = selection.node === undefined ? undefined : { node: selection.node };
    const taskId = await this.writeRows([placed], () => {
      // Samples are never deleted, so a known one only needs its task row: one statement, no transaction.
      if (known && !options.unique) return this.ctx.stores.tasks.insert({ ...this.taskRow('file', placed.target, params, known.id, null), ...pin });
      return this.ctx.stores.transaction(async (trx) => {
        if (options.unique) await this.refuseKnownSample(file.hashes.sha256, trx);
        return this.insertFileTask(trx, placed, params, null, pin);
      });
    });
    await this.ensureBinary(placed);
    return taskId;
  }

  async createUrlTask(url: string, params: TaskParams): Promise<number> {
    if ((await this.checkMachineSelection(params)).underWine) throw invalidInput(URL_REFUSED_UNDER_WINE, { context: { platform: params.platform } });
    return this.ctx.stores.tasks.insert(this.taskRow('url', url, params, null, null));
  }

  async submit(input: SubmitInput, params: TaskParams): Promise<SubmitResult> {
    if (input.files.length === 0 && input.strings.length === 0) throw invalidInput('No files or strings have been given!');
    const selection = await this.checkMachineSelection(params);
    // Like Cuckoo: options normalised, with process memory dumps on unless the form says otherwise.
    const submitParams = { ...params, options: formatOptions({ procmemdump: 'yes', ...parseOptions(params.options) }) };
    const workDir = await mkdtemp(join(this.ctx.layout.tmp, 'submit-'));
    try {
      const errors: string[] = [];
      let items = await this.collectItems(input, workDir, errors);
      if (selection.underWine) items = refuseUnderWine(items, params, errors);
      const placed = await this.placeAll(items);
      const stored = [...placed.files.values(), ...placed.archives.values()];
      const { submitId, taskIds } = await this.writeRows(stored, () =>
        this.ctx.stores.transaction((trx) => this.insertSubmission(trx, items, placed.files, submitParams)),
      );
      for (const file of stored) await this.ensureBinary(file);
      return { submitId, taskIds, errors };
    } finally {
      await rm(workDir, { recursive: true, force: true });
    }
  }

  /**
   * With `machine`, it must be a configured machine. Without it, `platform` and `tags` must fit at least
   * one configured machine: a task no machine can run must not wait in the queue forever.
   */
  async checkMachineSelection(params: TaskParams): Promise<MachineSelection> {
    const { machines } = this.ctx.stores;
    if (params.machine !== '') {
      if (!(await machines.getByName(params.machine))) {
        throw invalidInput(`Unknown machine ${JSON.stringify(params.machine)}; GET /machines/list shows the configured machines`);
      }
      return { underWine: false };
    }
    if (params.platform === '' && params.tags.length === 0) return { underWine: false };
    const cluster = await machines.list();
    const fleet = fleetOf(cluster);
    const wish = wishOfParams(params);
    if (!cluster.some((machine) => machineFits(machine, wish, fleet))) {
      const wanted = [
        params.platform !== '' ? `platform ${JSON.stringify(params.platform)}` : '',
        params.tags.length > 0 ? `all of the tags ${params.tags.map((tag) => JSON.stringify(tag)).join(', ')}` : '',
      ].filter(Boolean).join(' and ');
      throw invalidInput(`No configured machine has ${wanted}, so such a task could never run`);
    }
    return { underWine: runsUnderWine(wish, fleet) };
  }

  /**
   * A known sample keeps the type recorded when it was first stored (its row is never rewritten), so
   * libmagic is only asked about content not seen before.
   */
  private async identify(file: StagedFile): Promise<{ known: SampleRow | undefined; fileType: string }> {
    const known = await this.ctx.stores.samples.findBySha256(file.hashes.sha256);
    return { known, fileType: known?.file_type ?? (await this.ctx.fileType.detect((await onDisk(file)).path)) };
  }

  private async refuseKnownSample(sha256: string, db?: Db): Promise<void> {
    const sample = await this.ctx.stores.samples.findBySha256(sha256, db);
    if (sample && (await this.ctx.stores.tasks.anyTaskOfSample(sample.id, db))) {
      throw invalidInput('This file has already been submitted', { context: { sha256, sampleId: sample.id } });
    }
  }

  /** Files first, then the strings, in order; what cannot become a task is added to `errors`. */
  private async collectItems(input: SubmitInput, workDir: string, errors: string[]): Promise<SubmitItem[]> {
    const items: SubmitItem[] = [];
    for (const file of input.files) items.push(...(await this.expand(file, workDir, errors)));
    for (const item of input.strings) items.push(...(await this.resolveString(item, workDir, errors)));
    return items;
  }

  /** The files' binaries and targets, and the binaries of the archives they came from (kept as their provenance). */
  private async placeAll(items: readonly SubmitItem[]) {
    const files = new Map<SubmitItem, PlacedFile>();
    const archives = new Map<TypedFile, StoredFile>();
    try {
      for (const item of items) {
        if (item.kind !== 'file') continue;
        files.set(item, await this.place(item.file));
        const archive = item.origin?.archive;
        if (archive && !archives.has(archive)) archives.set(archive, await this.storeBinary(archive));
      }
      return { files, archives };
    } catch (error) {
      await this.discard([...files.values(), ...archives.values()]);
      throw error;
    }
  }

  private async insertSubmission(trx: Db, items: readonly SubmitItem[], placed: Map<SubmitItem, PlacedFile>, params: TaskParams) {
    // The work folder is gone once the request ends, so the submission records no tmp path.
    const submitId = await this.ctx.stores.submissions.create(null, trx);
    const archiveIds = new Map<TypedFile, number>();
    const taskIds: number[] = [];
    for (const item of items) {
      if (item.kind === 'url') {
        taskIds.push(await this.ctx.stores.tasks.insert(this.taskRow('url', item.url, params, null, submitId), trx));
        continue;
      }
      const origin = item.origin && (await this.archiveColumns(trx, item.origin, archiveIds));
      taskIds.push(await this.insertFileTask(trx, placed.get(item)!, params, submitId, origin));
    }
    return { submitId, taskIds };
  }

  /** The archive's own sample row is written once per submission, with its first file's task. */
  private async archiveColumns(trx: Db, origin: ArchiveOrigin, archiveIds: Map<TypedFile, number>): Promise<ArchiveColumns> {
    let archiveId = archiveIds.get(origin.archive);
    if (archiveId === undefined) {
      archiveId = await this.upsertSample(trx, origin.archive);
      archiveIds.set(origin.archive, archiveId);
    }
    return { archive_id: archiveId, archive_name: origin.archive.name, archive_member: origin.member };
  }

  /** An archive becomes its files (refusals become errors); any other file stays one item. */
  private async expand(file: StagedFile, workDir: string, errors: string[]): Promise<SubmitItem[]> {
    const { fileType } = await this.identify(file);
    const kind = archiveKindOf(fileType);
    const { archives } = this.ctx.config;
    if (kind === undefined || archives.max_depth === 0) return [{ kind: 'file', file: { ...file, fileType } }];
    const unpackDir = await mkdtemp(join(workDir, 'unpack-'));
    try {
      const found = await unpackArchive({ path: file.path, name: file.name, kind }, unpackDir, archiveLimits(archives), (path) => this.ctx.fileType.detect(path));
      if (found.length === 0) errors.push(`${file.name}: the archive holds no files`);
      const archive: TypedFile = { ...file, fileType };
      return found.map((entry) => ({
        kind: 'file',
        file: { path: entry.path, name: entry.baseName, hashes: entry.hashes, fileType: entry.fileType },
        origin: { archive, member: entry.member },
      }));
    } catch (error) {
      if (!isNestboxError(error, 'invalid_input')) throw error;
      errors.push(error.message);
      return [];
    }
  }

  private async resolveString(item: SubmittedString, workDir: string, errors: string[]): Promise<SubmitItem[]> {
    if (item.kind === 'error') {
      errors.push(item.message);
      return [];
    }
    if (item.kind === 'url') return [{ kind: 'url', url: item.url }];
    const dir = await mkdtemp(join(workDir, 'download-'));
    const path = join(dir, item.hash);
    try {
      const hashes = await downloadByHash(item.hash, path, this.ctx.config.virustotal, this.ctx.config.api.upload_limit);
      return await this.expand({ path, name: item.hash, hashes }, workDir, errors);
    } catch (error) {
      if (!isNestboxError(error, 'unavailable')) throw error;
      this.ctx.log.info({ hash: item.hash, err: error }, 'hash download failed');
      errors.push(`Error retrieving file hash: ${error.message}`);
      return [];
    }
  }

  /** Stores the binary (keeping an existing one) and makes the task's own target path for it. */
  private async place(file: TypedFile): Promise<PlacedFile> {
    const stored = await this.storeBinary(file);
    const targetDir = await mkdtemp(join(this.ctx.layout.tmp, 'tmp'));
    const target = join(targetDir, file.name);
    try {
      await linkOrCopy(file.path, target);
    } catch (error) {
      await rm(targetDir, { recursive: true, force: true });
      if (stored.createdBinary) await rm(stored.binary, { force: true });
      throw error;
    }
    return { ...stored, targetDir, target };
  }

  /** Stores the binary, keeping an existing one. */
  private async storeBinary(file: TypedFile): Promise<StoredFile> {
    const binary = this.ctx.layout.binary(file.hashes.sha256);
    const createdBinary = await linkOrCopy(file.path, binary);
    return { ...file, binary, createdBinary, binaryCertain: createdBinary };
  }

  /**
   * A stored sample's target is linked from its binary, so an upload held in memory is never written.
   * A sample row refers to that binary, so no failing request removes it. Should the binary have gone
   * from storage, the upload is placed as a new one.
   */
  private async placeKnown(file: StagedFile, fileType: string): Promise<PlacedFile> {
    const binary = this.ctx.layout.binary(file.hashes.sha256);
    const targetDir = await mkdtemp(join(this.ctx.layout.tmp, 'tmp'));
    const target = join(targetDir, file.name);
    try {
      await linkOrCopy(binary, target);
    } catch (error) {
      await rm(targetDir, { recursive: true, force: true });
      if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
      return this.place({ ...(await onDisk(file)), fileType });
    }
    return { ...file, content: undefined, fileType, binary, createdBinary: false, binaryCertain: true, targetDir, target };
  }

  /** Writes the rows (`write` makes one transaction of them); on failure removes the files placed for them. */
  private async writeRows<T>(placed: readonly StoredFile[], write: () => Promise<T>): Promise<T> {
    try {
      return await write();
    } catch (error) {
      await this.discard(placed);
      throw error;
    }
  }

  /**
   * Removes targets, and binaries this request created that no sample row refers to. A concurrent
   * request may have linked its target to such a binary meanwhile; ensureBinary() restores it then.
   */
  private async discard(placed: readonly StoredFile[]): Promise<void> {
    for (const file of placed) {
      if (isPlaced(file)) await rm(file.targetDir, { recursive: true, force: true });
      if (file.createdBinary && !(await this.ctx.stores.samples.findBySha256(file.hashes.sha256))) {
        await rm(file.binary, { force: true });
      }
    }
  }

  /** An archive has no target: its staged copy, still in the request's work folder, is linked instead. */
  private async ensureBinary(file: StoredFile): Promise<void> {
    if (file.binaryCertain) return;
    const present = await stat(file.binary).then(() => true, () => false);
    if (!present) await linkOrCopy(isPlaced(file) ? file.target : file.path, file.binary);
  }

  private async insertFileTask(
    trx: Db,
    file: PlacedFile,
    params: TaskParams,
    submitId: number | null,
    extra?: ArchiveColumns | { node: string },
  ): Promise<number> {
    const sampleId = await this.upsertSample(trx, file);
    const row = this.taskRow(extra && 'archive_id' in extra ? 'archive' : 'file', file.target, params, sampleId, submitId);
    return this.ctx.stores.tasks.insert({ ...row, ...extra }, trx);
  }

  private upsertSample(trx: Db, file: TypedFile): Promise<number> {
    const { hashes } = file;
    return this.ctx.stores.samples.upsert(
      {
        file_size: hashes.size,
        file_type: file.fileType,
        md5: hashes.md5,
        crc32: hashes.crc32,
        sha1: hashes.sha1,
        sha256: hashes.sha256,
        sha512: hashes.sha512,
        ssdeep: hashes.ssdeep,
      },
      trx,
    );
  }

  private taskRow(category: TaskCategory, target: string, params: TaskParams, sampleId: number | null, submitId: number | null): NewTask {
    return {
      target,
      category,
      timeout: params.timeout,
      priority: params.priority,
      custom: params.custom,
      owner: params.owner,
      machine: params.machine,
      package: params.package,
      platform: params.platform,
      tags: encodeList(params.tags),
      options: params.options,
      memory: params.memory ? 1 : 0,
      enforce_timeout: params.enforceTimeout ? 1 : 0,
      clock: params.clock,
      added_on: nowIso(),
      status: 'pending',
      sample_id: sampleId,
      submit_id: submitId,
    };
  }
}

/** A submission's items that cannot run under Wine become errors, as refusals of its archives do. */
function refuseUnderWine(items: SubmitItem[], params: TaskParams, errors: string[]): SubmitItem[] {
  return items.filter((item) => {
    const refused = item.kind === 'url' ? URL_REFUSED_UNDER_WINE : fileRefusedUnderWine(params.package, { fileName: item.file.name, fileType: item.file.fileType });
    if (refused) errors.push(refused);
    return !refused;
  });
}

function isPlaced(file: StoredFile): file is PlacedFile {
  return 'target' in file;
}

/** Writes a held upload to its staging path (see StagedFile.content). */
async function onDisk(file: StagedFile): Promise<StagedFile> {
  if (file.content === undefined) return file;
  try {
    await writeHeld(file.path, file.content);
  } catch (error) {
    await removeFile(file.path);
    throw error;
  }
  file.content = undefined;
  return file;
}

/** Hard-links `from` to `to` (copying across file systems); false when `to` already exists. */
async function linkOrCopy(from: string, to: string): Promise<boolean> {
  try {
    await link(from, to);
    return true;
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'EEXIST') return false;
    if (code !== 'EXDEV' && code !== 'EPERM' && code !== 'EMLINK' && code !== 'ENOTSUP') throw error;
  }
  try {
    await copyFile(from, to, constants.COPYFILE_EXCL);
    return true;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'EEXIST') return false;
    await rm(to, { force: true });
    throw error;
  }
}
