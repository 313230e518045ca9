import { createReadStream } from 'node:fs';
import { mkdir, mkdtemp, readdir, rename, rm } from 'node:fs/promises';
import { join } from 'node:path';
import type { Readable } from 'node:stream';
import { invalidInput, notFound } from '../errors.js';
import type { StorageLayout } from './layout.js';

/**
 * Where a task's results (the Cuckoo folder storage/analyses/<id>) are kept. The main node of a cluster
 * receives workers' results through it; a later implementation may keep them in an S3-compatible
 * object store (see README, "A cluster"). Paths inside a task's results use `/`.
 */
export interface ResultStore {
  /**
   * Makes a task's results whole in one step: `fill` writes them into an empty local folder, which then
   * replaces the task's earlier results, if any. When `fill` or the replacement fails, the earlier
   * results stay as they were and nothing of the new ones is left.
   */
  put(taskId: number, fill: (folder: string) => Promise<void>): Promise<void>;
  /** One file of a task's results; not_found when it is not there. */
  open(taskId: number, path: string): Promise<Readable>;
  /** Every file of a task's results, sorted; empty when the task has none. */
  list(taskId: number): Promise<string[]>;
  delete(taskId: number): Promise<void>;
}

/**
 * The results as folders in storage/analyses, where every endpoint reads them. New results are written
 * to storage/.incoming (on the same file system, so a rename moves them) and renamed into place.
 */
export class LocalResultStore implements ResultStore {
  readonly incoming: string;
  /** The replacement under way per task: two uploads of one task (a retry racing a slow first try) take turns. */
  private readonly replacing = new Map<number, Promise<void>>();

  constructor(private readonly layout: StorageLayout) {
    this.incoming = join(layout.root, '.incoming');
  }

  async put(taskId: number, fill: (folder: string) => Promise<void>): Promise<void> {
    await mkdir(this.incoming, { recursive: true, mode: 0o750 });
    const staging = await mkdtemp(join(this.incoming, `${taskId}-`));
    try {
      await fill(staging);
      await this.replaceInTurn(taskId, staging);
    } catch (error) {
      await rm(staging, { recursive: true, force: true });
      throw error;
    }
  }

  async open(taskId: number, path: string): Promise<Readable> {
    const file = join(this.folder(taskId), ...relativeSteps(path));
    const stream = createReadStream(file);
    await new Promise<void>((resolve, reject) => {
      stream.once('ready', resolve);
      stream.once('error', (error: NodeJS.ErrnoException) =>
        reject(error.code === 'ENOENT' || error.code === 'EISDIR' ? notFound(`Task ${taskId} has no result ${path}`, { cause: error }) : error),
      );
    });
    return stream;
  }

  async list(taskId: number): Promise<string[]> {
    const entries = await readdir(this.folder(taskId), { recursive: true, withFileTypes: true }).catch((error: NodeJS.ErrnoException) => {
      if (error.code === 'ENOENT') return [];
      throw error;
    });
    const root = this.folder(taskId);
    return entries
      .filter((entry) => entry.isFile())
      .map((entry) => join(entry.parentPath, entry.name).slice(root.length + 1))
      .sort();
  }

  async delete(taskId: number): Promise<void> {
    await rm(this.folder(taskId), { recursive: true, force: true });
  }

  /**
   * What a crash left in storage/.incoming: unfinished uploads go, and earlier results moved aside for
   * a replacement that never happened go back. Only while nothing is being put.
   */
  async sweep(): Promise<void> {
    const names = await readdir(this.incoming).catch(() => []);
    for (const name of names) {
      const aside = /^(\d+)-[^.]+\.old$/.exec(name);
      const target = aside ? this.folder(Number(aside[1])) : undefined;
      if (target !== undefined && (await rename(join(this.incoming, name), target).then(() => true, () => false))) continue;
      await rm(join(this.incoming, name), { recursive: true, force: true });
    }
  }

  private folder(taskId: number): string {
    return this.layout.analysis(taskId).dir;
  }

  private async replaceInTurn(taskId: number, staging: string): Promise<void> {
    const turn = (this.replacing.get(taskId) ?? Promise.resolve()).catch(() => undefined).then(() => this.replace(taskId, staging));
    this.replacing.set(taskId, turn);
    try {
      await turn;
    } finally {
      if (this.replacing.get(taskId) === turn) this.replacing.delete(taskId);
    }
  }

  /**
   * A folder cannot be renamed over a non-empty one: the earlier results are renamed aside first and
   * removed after, so readers see either the old or the new folder (or, for the instant between the two
   * renames, none), never a mix. If the second rename fails, the earlier results go back.
   */
  private async replace(taskId: number, staging: string): Promise<void> {
    const target = this.folder(taskId);
    const aside = `${staging}.old`;
    const movedAside = await rename(target, aside).then(
      () => true,
      (error: NodeJS.ErrnoException) => {
        if (error.code === 'ENOENT') return false;
        throw error;
      },
    );
    try {
      await rename(staging, target);
    } catch (error) {
      if (movedAside) await rename(aside, target);
      throw error;
    }
    if (movedAside) await rm(aside, { recursive: true, force: true });
  }
}

/** A path inside a task's results as steps; nothing may leave the folder. */
function relativeSteps(path: string): string[] {
  const steps = path.split('/');
  if (path === '' || steps.some((step) => step === '' || step === '.' || step === '..' || step.includes('\0'))) {
    throw invalidInput(`Invalid path inside a task's results: ${JSON.stringify(path)}`);
  }
  return steps;
}
