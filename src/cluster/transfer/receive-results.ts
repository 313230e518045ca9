import { createHash } from 'node:crypto';
import { existsSync } from 'node:fs';
import { rm, symlink } from 'node:fs/promises';
import type { IncomingHttpHeaders } from 'node:http';
import { join } from 'node:path';
import type { AppContext } from '../../app.js';
import { runsSampleFile, type TaskRow } from '../../db/schema.js';
import { conflict, invalidInput, notFound, tooLarge } from '../../errors.js';
import type { ResultStore } from '../../storage/result-store.js';
import { type ExtractedTar, extractTar } from '../../storage/tar-extract.js';
import { LENGTH_HEADER, NODE_HEADER, SHA256_HEADER } from './protocol.js';

/**
 * The main node's side of a results upload: a worker's task folder arrives as a tar archive, announced
 * by its length and sha256 (the seal). It is unpacked into a staging folder of the result store, and
 * only an archive that is whole (its end marker, its length and its sha256 all as announced) replaces
 * the task's results. Anything else leaves the earlier results, and nothing of the upload, behind.
 */

export interface ResultsSeal {
  length: number;
  sha256: string;
}

/** Who sends an upload and what it promises, from the request headers. */
export interface ResultsUpload extends ResultsSeal {
  /** The sending node's name ('' when not given). */
  node: string;
}

export function uploadOf(headers: IncomingHttpHeaders): ResultsUpload {
  return { ...sealOf(headers), node: String(headers[NODE_HEADER] ?? '') };
}

/** The seal a worker sends with its upload, from the request headers. */
function sealOf(headers: IncomingHttpHeaders): ResultsSeal {
  const length = Number(headers[LENGTH_HEADER]);
  const sha256 = String(headers[SHA256_HEADER] ?? '').toLowerCase();
  if (!Number.isSafeInteger(length) || length < 0 || !/^[0-9a-f]{64}$/.test(sha256)) {
    throw invalidInput(`A results upload needs its length in ${LENGTH_HEADER} and its sha256 in ${SHA256_HEADER}`);
  }
  return { length, sha256 };
}

/** Receives one upload of task `taskId`'s results; returns what the archive held. */
export async function receiveResults(
  ctx: AppContext,
  store: ResultStore,
  taskId: number,
  body: AsyncIterable<Uint8Array>,
  seal: ResultsUpload,
): Promise<ExtractedTar> {
  const task = await uploadableTask(ctx, taskId, seal.node);
  const { results_limit: limit, results_max_entries: maxEntries } = ctx.config.cluster;
  if (seal.length > limit) throw tooLarge(`The results of ${seal.length} bytes are larger than the limit of ${limit} bytes (cluster.results_limit)`);
  let extracted: ExtractedTar | undefined;
  await store.put(taskId, async (folder) => {
    const check = new SealCheck(seal);
    extracted = await extractTar(check.pass(body), folder, { maxBytes: limit, maxEntries });
    check.verify();
    await linkBinary(ctx, task, folder);
  });
  return extracted!;
}

/**
 * Results are taken for a task a worker has analysed and is processing, from the node that holds it: a
 * requeued task's, or another node's after a lease expired, are stale.
 */
async function uploadableTask(ctx: AppContext, taskId: number, node: string): Promise<TaskRow> {
  const task = await ctx.stores.tasks.get(taskId);
  if (!task) throw notFound(`Task ${taskId} not found`, { context: { taskId } });
  if (task.status !== 'completed') {
    throw conflict(`Task ${taskId} is ${task.status}; results are taken while it is completed and being processed`, {
      context: { taskId, status: task.status },
    });
  }
  if (task.node !== null && task.node !== node) {
    throw conflict(`Task ${taskId} is held by node ${task.node}, not by ${node || 'an unnamed node'}`, { context: { taskId, holder: task.node, node } });
  }
  return task;
}

/** Counts and hashes the bytes as they pass; verify() says whether they were the ones announced. */
export class SealCheck {
  private readonly hash = createHash('sha256');
  private received = 0;

  constructor(private readonly seal: ResultsSeal) {}

  async *pass(source: AsyncIterable<Uint8Array>): AsyncGenerator<Uint8Array> {
    for await (const chunk of source) {
      this.received += chunk.length;
      if (this.received > this.seal.length) throw invalidInput(`The results upload is longer than the ${this.seal.length} bytes announced`);
      this.hash.update(chunk);
      yield chunk;
    }
  }

  verify(): void {
    if (this.received !== this.seal.length) {
      throw invalidInput(`The results upload ended after ${this.received} of the ${this.seal.length} bytes announced`);
    }
    const sha256 = this.hash.digest('hex');
    if (sha256 !== this.seal.sha256) {
      throw invalidInput(`The results upload's sha256 is ${sha256}, not the ${this.seal.sha256} announced`);
    }
  }
}

/** The folder's `binary` links to this node's copy of the sample, as in a folder this node ran itself. */
async function linkBinary(ctx: AppContext, task: TaskRow, folder: string): Promise<void> {
  if (!runsSampleFile(task.category) || task.sample_id === null) return;
  const sample = await ctx.stores.samples.get(task.sample_id);
  if (!sample || !existsSync(ctx.layout.binary(sample.sha256))) return;
  const link = join(folder, 'binary');
  await rm(link, { recursive: true, force: true });
  await symlink(ctx.layout.binary(sample.sha256), link);
}
