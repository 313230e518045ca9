import { createWriteStream } from 'node:fs';
import { openAsBlob } from 'node:fs';
import { basename } from 'node:path';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { ReadableStream as WebReadableStream } from 'node:stream/web';
import { decodeList } from '../../db/json-columns.js';
import { runsSampleFile, type TaskRow } from '../../db/schema.js';

/** How a remote node is reached: its REST API and, when it requires one, its Bearer token. */
export interface RemoteEndpoint {
  name: string;
  url: string;
  token: string | null;
}

/** A remote node's own view of a task it runs (its /tasks/view). */
export interface RemoteTaskView {
  status: string;
  errors: string[];
}

/**
 * A failure talking to a remote node. `unreachable`: no answer at all (refused, timed out), which
 * a later attempt may get past; otherwise the node answered, with a status it does not take back.
 */
export class RemoteNodeError extends Error {
  constructor(
    message: string,
    readonly unreachable: boolean,
  ) {
    super(message);
    this.name = 'RemoteNodeError';
  }
}

const TIMEOUT_MS = 30_000;
/** Downloads (reports, pcaps) may be large; they get longer. */
const DOWNLOAD_TIMEOUT_MS = 600_000;

/** Cuckoo 2.0.x's (and nestbox's) REST API on a remote node, as Cuckoo's distributed master uses it. */
export class RemoteNodeClient {
  constructor(private readonly node: RemoteEndpoint) {}

  /** GET /machines/list: the node's machine objects, as it sends them. */
  async machines(): Promise<Array<Record<string, unknown>>> {
    const body = await this.json('machines/list');
    if (!Array.isArray(body.machines)) throw new RemoteNodeError(`${this.where('machines/list')} has no "machines" list`, false);
    return body.machines as Array<Record<string, unknown>>;
  }

  /** GET /cuckoo/status. */
  async status(): Promise<Record<string, unknown>> {
    return this.json('cuckoo/status');
  }

  /** Creates the task on the node with the task's stored fields; its id there. */
  async createTask(task: TaskRow): Promise<number> {
    const form = creationForm(task);
    const path = runsSampleFile(task.category) ? 'tasks/create/file' : 'tasks/create/url';
    if (runsSampleFile(task.category)) form.append('file', await openAsBlob(task.target), basename(task.target));
    else form.append('url', task.target);
    const body = await this.json(path, { method: 'POST', body: form });
    const id = body.task_id;
    if (typeof id !== 'number') throw new RemoteNodeError(`${this.where(path)} answered no task id: ${JSON.stringify(body).slice(0, 200)}`, false);
    return id;
  }

  /** The node's view of its task; undefined when it has no such task. */
  async view(nodeTaskId: number): Promise<RemoteTaskView | undefined> {
    const response = await this.fetch(`tasks/view/${nodeTaskId}`);
    if (response.status === 404) return undefined;
    const body = await this.bodyOf(response, `tasks/view/${nodeTaskId}`);
    const task = body.task as { status?: unknown; errors?: unknown } | undefined;
    if (typeof task?.status !== 'string') throw new RemoteNodeError(`${this.where(`tasks/view/${nodeTaskId}`)} shows no task status`, false);
    return { status: task.status, errors: Array.isArray(task.errors) ? task.errors.map(String) : [] };
  }

  /** Streams a file the node serves into `destination`; false when the node has none (404). */
  async download(path: string, destination: string): Promise<boolean> {
    const response = await this.fetch(path, {}, DOWNLOAD_TIMEOUT_MS);
    if (response.status === 404) {
      await response.body?.cancel();
      return false;
    }
    if (!response.ok || !response.body) throw await this.refusal(response, path);
    try {
      await pipeline(Readable.fromWeb(response.body as WebReadableStream<Uint8Array>), createWriteStream(destination));
    } catch (error) {
      throw new RemoteNodeError(`${this.where(path)} broke off: ${(error as Error).message}`, true);
    }
    return true;
  }

  /** GET /tasks/delete/<id>: the node forgets the task once its results are here. */
  async deleteTask(nodeTaskId: number): Promise<void> {
    await this.json(`tasks/delete/${nodeTaskId}`);
  }

  private async json(path: string, init: RequestInit = {}): Promise<Record<string, unknown>> {
    return this.bodyOf(await this.fetch(path, init), path);
  }

  private async bodyOf(response: Response, path: string): Promise<Record<string, unknown>> {
    if (!response.ok) throw await this.refusal(response, path);
    const text = await response.text();
    try {
      const body: unknown = JSON.parse(text);
      if (body !== null && typeof body === 'object' && !Array.isArray(body)) return body as Record<string, unknown>;
    } catch {
      // said below
    }
    throw new RemoteNodeError(`${this.where(path)} answered something that is not a JSON object: ${text.slice(0, 120)}`, false);
  }

  private async fetch(path: string, init: RequestInit = {}, timeoutMs = TIMEOUT_MS): Promise<Response> {
    const headers = new Headers(init.headers);
    if (this.node.token) headers.set('authorization', `Bearer ${this.node.token}`);
    try {
      return await fetch(this.address(path), { ...init, headers, signal: AbortSignal.timeout(timeoutMs) });
    } catch (error) {
      const cause = (error as { cause?: { message?: string } }).cause?.message;
      throw new RemoteNodeError(`${this.where(path)} could not be reached: ${cause ?? (error as Error).message}`, true);
    }
  }

  private async refusal(response: Response, path: string): Promise<RemoteNodeError> {
    const text = await response.text().catch(() => '');
    let message = text.slice(0, 200);
    try {
      message = String((JSON.parse(text) as { message?: unknown }).message ?? message);
    } catch {
      // not JSON: the text itself
    }
    return new RemoteNodeError(`${this.where(path)} answered ${response.status}${message ? `: ${message}` : ''}`, false);
  }

  private address(path: string): URL {
    const base = this.node.url.endsWith('/') ? this.node.url : `${this.node.url}/`;
    return new URL(path, base);
  }

  private where(path: string): string {
    return `node ${this.node.name} (${this.address(path).pathname})`;
  }
}

/** The creation fields Cuckoo's distributed master passes on, from the stored task. */
function creationForm(task: TaskRow): FormData {
  const form = new FormData();
  const fields: Record<string, string> = {
    package: task.package,
    timeout: task.timeout > 0 ? String(task.timeout) : '',
    priority: String(task.priority),
    options: task.options,
    machine: task.machine,
    platform: task.platform,
    tags: decodeList(task.tags).join(','),
    custom: task.custom,
    owner: task.owner,
    // Only when true: Cuckoo's create/url takes any value given, "0" too, as true (cuckoo-compat §2.2).
    memory: task.memory === 1 ? '1' : '',
    enforce_timeout: task.enforce_timeout === 1 ? '1' : '',
    clock: cuckooClock(task.clock),
  };
  for (const [name, value] of Object.entries(fields)) if (value !== '') form.append(name, value);
  return form;
}

/** `%m-%d-%Y %H:%M:%S`, the clock format of Cuckoo's creation endpoints (UTC, as nestbox reads it). */
function cuckooClock(iso: string): string {
  const date = new Date(iso);
  if (Number.isNaN(date.getTime())) return '';
  const two = (n: number) => String(n).padStart(2, '0');
  return `${two(date.getUTCMonth() + 1)}-${two(date.getUTCDate())}-${date.getUTCFullYear()} ${two(date.getUTCHours())}:${two(date.getUTCMinutes())}:${two(date.getUTCSeconds())}`;
}
