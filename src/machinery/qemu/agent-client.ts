import { setTimeout as sleep } from 'node:timers/promises';
import { NestboxError, unavailable } from '../../errors.js';

/**
 * Client of the Cuckoo 2.0 agent protocol (agent.py 0.9, HTTP, form fields in, JSON out). It speaks only
 * what Cuckoo's own agent understands, so the same client drives nestbox's Linux agent and the agent of
 * a guest prepared for Cuckoo (Windows included: test/system/qemu-windows-guest.test.ts drives it against
 * a protocol-level double of Cuckoo 2.0.7's agent in a Windows guest, since no Windows guest runs here).
 */
export interface AgentInfo {
  message: string;
  version?: string;
  features?: string[];
}

export interface ExecuteResult {
  stdout: string | null;
  stderr: string | null;
}

export interface ExecuteOptions {
  /** Run in the background and answer at once. */
  async?: boolean;
  /** Through the guest's shell (Cuckoo passes the command to Popen with shell=True). */
  shell?: boolean;
  cwd?: string;
}

type Fields = Record<string, string | Blob>;

export class AgentClient {
  constructor(
    readonly baseUrl: string,
    private readonly requestTimeoutMs = 60_000,
  ) {}

  /** `GET /`: the agent's greeting; fails when nothing answers. */
  hello(timeoutMs = 2000): Promise<AgentInfo> {
    return this.request<AgentInfo>('GET', '/', undefined, timeoutMs);
  }

  /** Polls `GET /` until the agent answers or `timeoutMs` passes. */
  async waitUntilReady(timeoutMs: number, signal?: AbortSignal): Promise<AgentInfo> {
    const deadline = Date.now() + timeoutMs;
    let lastError: unknown;
    while (Date.now() < deadline) {
      signal?.throwIfAborted();
      try {
        return await this.hello(Math.min(2000, Math.max(200, deadline - Date.now())));
      } catch (error) {
        lastError = error;
        await sleep(20);
      }
    }
    throw unavailable(`the guest agent at ${this.baseUrl} did not answer within ${timeoutMs} ms: ${(lastError as Error)?.message}`, {
      cause: lastError,
      context: { baseUrl: this.baseUrl },
    });
  }

  /** `GET /status`: what the analyzer last reported. Short timeout: it is polled. */
  async status(timeoutMs = 5000): Promise<{ status: string | null; description: string | null }> {
    return this.request('GET', '/status', undefined, timeoutMs);
  }

  /** `GET /system`: Python's platform.system() in the guest: Linux, Windows... */
  async system(): Promise<string> {
    return (await this.request<{ system: string }>('GET', '/system')).system;
  }

  async environ(): Promise<Record<string, string>> {
    return (await this.request<{ environ: Record<string, string> }>('GET', '/environ')).environ;
  }

  async mkdir(dirpath: string): Promise<void> {
    await this.request('POST', '/mkdir', { dirpath });
  }

  /** `POST /mkdtemp`: a new folder named `<prefix>...` in `dirpath` (the agent's temporary folder when not given). */
  async mkdtemp(where: { prefix?: string; dirpath?: string } = {}): Promise<string> {
    const fields: Fields = { prefix: where.prefix ?? 'tmp' };
    if (where.dirpath) fields.dirpath = where.dirpath;
    return (await this.request<{ dirpath: string }>('POST', '/mkdtemp', fields)).dirpath;
  }

  /** `GET /pinning`: from now on the agent answers only this client's address (Cuckoo pins every guest it drives). */
  async pin(): Promise<void> {
    await this.request('GET', '/pinning');
  }

  async store(filepath: string, data: Buffer): Promise<void> {
    await this.request('POST', '/store', { filepath, file: new Blob([data]) });
  }

  async extract(dirpath: string, zip: Buffer): Promise<void> {
    await this.request('POST', '/extract', { dirpath, zipfile: new Blob([zip]) });
  }

  async remove(path: string): Promise<void> {
    await this.request('POST', '/remove', { path });
  }

  /** `POST /retrieve`: a guest file's bytes, or null when it does not exist. */
  async retrieve(filepath: string): Promise<Buffer | null> {
    const response = await this.send('POST', '/retrieve', { filepath }, this.requestTimeoutMs);
    if (response.status === 404) return null;
    if (!response.ok) throw await this.failure('/retrieve', response);
    return Buffer.from(await response.arrayBuffer());
  }

  async execute(command: string, options: ExecuteOptions = {}): Promise<ExecuteResult> {
    const fields: Fields = { command };
    if (options.async) fields.async = '1';
    if (options.shell) fields.shell = '1';
    if (options.cwd) fields.cwd = options.cwd;
    return this.request<ExecuteResult>('POST', '/execute', fields);
  }

  /** `POST /execpy`: runs a Python file with the agent's interpreter. */
  async execpy(filepath: string, options: Omit<ExecuteOptions, 'shell'> = {}): Promise<ExecuteResult> {
    const fields: Fields = { filepath };
    if (options.async) fields.async = '1';
    if (options.cwd) fields.cwd = options.cwd;
    return this.request<ExecuteResult>('POST', '/execpy', fields);
  }

  private async request<T>(method: 'GET' | 'POST', path: string, fields?: Fields, timeoutMs = this.requestTimeoutMs): Promise<T> {
    const response = await this.send(method, path, fields, timeoutMs);
    if (!response.ok) throw await this.failure(path, response);
    return (await response.json()) as T;
  }

  private async send(method: 'GET' | 'POST', path: string, fields: Fields | undefined, timeoutMs: number): Promise<Response> {
    let body: FormData | undefined;
    if (fields) {
      body = new FormData();
      // A file part needs a file name for the agent to treat it as a file.
      for (const [name, value] of Object.entries(fields)) {
        if (typeof value === 'string') body.append(name, value);
        else body.append(name, value, name);
      }
    }
    try {
      return await fetch(`${this.baseUrl}${path}`, { method, body, signal: AbortSignal.timeout(timeoutMs) });
    } catch (error) {
      throw unavailable(`guest agent ${method} ${path}: ${(error as Error).message}`, { cause: error, context: { baseUrl: this.baseUrl } });
    }
  }

  private async failure(path: string, response: Response): Promise<NestboxError> {
    const text = await response.text().catch(() => '');
    let message = text.slice(0, 500);
    try {
      message = (JSON.parse(text) as { message?: string }).message ?? message;
    } catch {
      // not JSON: keep the text
    }
    return new NestboxError('internal', `guest agent ${path} answered ${response.status}: ${message}`, {
      context: { baseUrl: this.baseUrl, status: response.status },
    });
  }
}
