import { createHash, randomUUID } from 'node:crypto';
import { createReadStream, existsSync } from 'node:fs';
import { open, rename } from 'node:fs/promises';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import type { ReadableStream as WebReadableStream } from 'node:stream/web';
import type { AppContext } from '../../app.js';
import { invalidInput, unavailable } from '../../errors.js';
import type { StorageLayout } from '../../storage/layout.js';
import { tarFolder } from '../../storage/tar-stream.js';
import { removeFile, writeHashedFile } from '../../storage/upload.js';
import { LENGTH_HEADER, NODE_HEADER, nodeCredential, RESULTS_TYPE, resultsPath, samplePath, SHA256_HEADER } from './protocol.js';
import { remoteFailure, type RetryPolicy, withRetries } from './retry.js';

export interface TransferSettings {
  /** The main node's API, e.g. http://main:8090. */
  mainUrl: string;
  credential: string;
  /** This node's name, sent with uploads. */
  nodeName: string;
  layout: StorageLayout;
  /** Largest sample accepted (api.upload_limit). */
  sampleLimit: number;
  retry: RetryPolicy;
}

/** What the main node stored of an upload. */
export interface UploadReceipt {
  files: number;
  folders: number;
  bytes: number;
  /** Tries it took, the successful one included. */
  attempts: number;
}

/** A results archive spooled to disk, so every attempt sends the same bytes from a fresh stream. */
interface Spool {
  path: string;
  length: number;
  sha256: string;
}

/**
 * A worker's side of the transfers with the main node (protocol.ts): samples come down into this
 * node's storage/binaries, verified by their sha256; task folders go up as tar archives with their
 * length and sha256, retried with backoff.
 */
export class TransferClient {
  constructor(private readonly settings: TransferSettings) {}

  static fromContext(ctx: AppContext): TransferClient {
    const { cluster, api } = ctx.config;
    if (cluster.main_url === '') throw invalidInput('A worker needs cluster.main_url: the main node it fetches samples from and sends results to');
    return new TransferClient({
      mainUrl: cluster.main_url.replace(/\/+$/, ''),
      credential: nodeCredential(ctx.config),
      nodeName: ctx.node.node,
      layout: ctx.layout,
      sampleLimit: api.upload_limit,
      retry: { attempts: cluster.transfer_attempts, backoffMs: cluster.transfer_backoff_seconds * 1000, log: ctx.log },
    });
  }

  /** The task's sample in this node's storage/binaries/<sha256>, fetched from the main node unless there. */
  async fetchSample(taskId: number, sha256: string): Promise<string> {
    const stored = this.settings.layout.binary(sha256);
    if (existsSync(stored)) return stored;
    return withRetries(`Fetching the sample of task ${taskId}`, this.settings.retry, () => this.downloadSample(taskId, sha256, stored));
  }

  /** Sends `folder` (a task folder, without its `binary` link) as task `taskId`'s results. */
  async uploadResults(taskId: number, folder: string): Promise<UploadReceipt> {
    const spool = await this.spool(taskId, folder);
    try {
      return await withRetries(`Uploading the results of task ${taskId}`, this.settings.retry, (attempt) => this.put(taskId, spool, attempt));
    } finally {
      await removeFile(spool.path);
    }
  }

  private async downloadSample(taskId: number, sha256: string, stored: string): Promise<string> {
    const response = await this.request(samplePath(taskId), { method: 'GET' });
    const what = `Fetching the sample of task ${taskId}`;
    if (!response.ok || response.body === null) throw remoteFailure(what, response.status, await messageOf(response));
    const announced = response.headers.get(SHA256_HEADER);
    if (announced !== sha256) {
      await response.body.cancel();
      throw remoteFailure(what, 409, `it sends a sample with sha256 ${announced}, not the task's ${sha256}`);
    }
    const part = join(this.settings.layout.binaries, `.${sha256}.${randomUUID()}.part`);
    const length = Number(response.headers.get('content-length'));
    const hashes = await writeHashedFile(Readable.fromWeb(response.body as WebReadableStream<Uint8Array>), part, {
      limit: this.settings.sampleLimit,
      expectedMax: Number.isSafeInteger(length) ? length : undefined,
      what: `The sample of task ${taskId}`,
    });
    if (hashes.sha256 !== sha256) {
      await removeFile(part);
      throw unavailable(`${what}: it arrived damaged (sha256 ${hashes.sha256}, not ${sha256})`);
    }
    await rename(part, stored);
    return stored;
  }

  /** The folder as an uncompressed tar archive in a file of tmp/, with its length and sha256. */
  private async spool(taskId: number, folder: string): Promise<Spool> {
    const path = join(this.settings.layout.tmp, `results-${taskId}-${randomUUID()}.tar`);
    const archive = await tarFolder(folder, { compression: 'none', includeTopLevel: (name) => name !== 'binary' });
    const hash = createHash('sha256');
    let length = 0;
    const file = await open(path, 'wx', 0o600);
    try {
      for await (const chunk of archive) {
        hash.update(chunk as Buffer);
        length += (chunk as Buffer).length;
        await file.write(chunk as Buffer);
      }
    } catch (error) {
      await file.close();
      await removeFile(path);
      throw error;
    }
    await file.close();
    return { path, length, sha256: hash.digest('hex') };
  }

  private async put(taskId: number, spool: Spool, attempt: number): Promise<UploadReceipt> {
    const response = await this.request(resultsPath(taskId), {
      method: 'PUT',
      headers: { 'content-type': RESULTS_TYPE, [NODE_HEADER]: this.settings.nodeName, [LENGTH_HEADER]: String(spool.length), [SHA256_HEADER]: spool.sha256 },
      body: Readable.toWeb(createReadStream(spool.path)) as ReadableStream<Uint8Array>,
      duplex: 'half',
    });
    if (!response.ok) throw remoteFailure(`Uploading the results of task ${taskId}`, response.status, await messageOf(response));
    const stored = (await response.json()) as Omit<UploadReceipt, 'attempts'>;
    return { files: stored.files, folders: stored.folders, bytes: stored.bytes, attempts: attempt };
  }

  private request(path: string, init: RequestInit): Promise<Response> {
    const headers = new Headers(init.headers);
    headers.set('authorization', `Bearer ${this.settings.credential}`);
    return fetch(this.settings.mainUrl + path, { ...init, headers });
  }
}

async function messageOf(response: Response): Promise<string> {
  const text = await response.text().catch(() => '');
  try {
    return String((JSON.parse(text) as { message?: unknown }).message ?? text);
  } catch {
    return text.slice(0, 200) || response.statusText;
  }
}
