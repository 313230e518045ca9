import { defaultHome, loadConfig } from '../config/load.js';
import { NestboxError } from '../errors.js';

export interface ClientOptions {
  home?: string;
  url?: string;
  token?: string;
}

/** A small client of nestbox's own REST API, configured from the installation's config file. */
export class ApiClient {
  readonly baseUrl: string;
  private readonly token: string;

  constructor(options: ClientOptions) {
    const needConfig = options.url === undefined || options.token === undefined;
    const config = needConfig ? loadConfig(options.home ?? defaultHome()).config : undefined;
    this.baseUrl = (options.url ?? `http://${config!.api.host}:${config!.api.port}`).replace(/\/+$/, '');
    this.token = options.token ?? config!.api.token;
  }

  async json<T>(path: string, init: RequestInit = {}): Promise<T> {
    const response = await this.fetch(path, init);
    const body = (await response.json().catch(() => ({}))) as { message?: string };
    if (!response.ok) {
      throw new NestboxError('internal', `${path}: HTTP ${response.status}${body.message ? `: ${body.message}` : ''}`);
    }
    return body as T;
  }

  fetch(path: string, init: RequestInit = {}): Promise<Response> {
    const headers = new Headers(init.headers);
    if (this.token) headers.set('authorization', `Bearer ${this.token}`);
    return fetch(this.baseUrl + path, { ...init, headers }).catch((error: Error) => {
      throw new NestboxError('unavailable', `cannot reach nestbox at ${this.baseUrl}: ${error.message}`, { cause: error });
    });
  }
}
