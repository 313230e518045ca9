import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { FastifyInstance } from 'fastify';
import type { Kysely } from 'kysely';
import { pino } from 'pino';
import { type AppContext, createContext } from '../../src/app.js';
import { validateConfig } from '../../src/config/load.js';
import { openDatabase } from '../../src/db/connect.js';
import type { Database } from '../../src/db/schema.js';
import type { z } from 'zod';
import type { configSchema } from '../../src/config/schema.js';
import { createService, type Service } from '../../src/service.js';

export interface TestServer {
  url: string;
  ctx: AppContext;
  app: FastifyInstance;
  service: Service;
  home: string;
  /**
   * A connection of the test's own to the server's database, for looking at what was stored and for
   * injecting faults; nestbox itself reaches the database only through its stores.
   */
  db: Kysely<Database>;
  /** fetch against the server, with the bearer token when one is configured. */
  fetch(path: string, init?: RequestInit): Promise<Response>;
  json<T = any>(path: string, init?: RequestInit): Promise<{ status: number; body: T; response: Response }>;
  close(): Promise<void>;
}

/** What a configuration file may say: every key with a default is optional. */
type ConfigInput = z.input<typeof configSchema>;

/** A real nestbox API on a random loopback port, with its own home folder and SQLite file. */
export async function startTestServer(
  overrides: ConfigInput = {},
  options: { onExit?: () => void; engine?: boolean; pollMs?: number } = {},
): Promise<TestServer> {
  const home = mkdtempSync(join(tmpdir(), 'nestbox-test-'));
  const raw = {
    ...overrides,
    api: { token: '', ...overrides.api },
    paths: { storage: join(home, 'storage'), tmppath: join(home, 'tmp'), ...overrides.paths },
    logging: { level: 'silent', ...overrides.logging },
  };
  const config = validateConfig(raw);
  const ctx = await createContext({ config, home, log: pino({ level: config.logging.level }) });
  const service = await createService(ctx, { engine: options.engine ?? false, pollMs: options.pollMs, onExit: options.onExit });
  const app = service.app;
  const inspection = await openDatabase(config.database.connection, home);
  await app.listen({ host: '127.0.0.1', port: 0 });
  const address = app.server.address();
  if (address === null || typeof address === 'string') throw new Error('server has no TCP address');
  const url = `http://127.0.0.1:${address.port}`;
  const token = config.api.token;
  const doFetch = (path: string, init: RequestInit = {}) => {
    const headers = new Headers(init.headers);
    if (token && !headers.has('authorization')) headers.set('authorization', `Bearer ${token}`);
    return fetch(url + path, { ...init, headers });
  };
  return {
    url,
    ctx,
    app,
    service,
    home,
    db: inspection.db,
    fetch: doFetch,
    async json(path, init) {
      const response = await doFetch(path, init);
      const text = await response.text();
      let body: any;
      try {
        body = JSON.parse(text);
      } catch {
        throw new Error(`${path} answered ${response.status} with non-JSON: ${text.slice(0, 200)}`);
      }
      return { status: response.status, body, response };
    },
    async close() {
      await service.close();
      await inspection.close();
      await ctx.close();
      rmSync(home, { recursive: true, force: true });
    },
  };
}

/** A multipart form from plain fields and files given as [name, filename, content]. */
export function form(fields: Record<string, string> = {}, files: Array<[string, string, string | Uint8Array]> = []): FormData {
  const data = new FormData();
  for (const [key, value] of Object.entries(fields)) data.append(key, value);
  for (const [field, filename, content] of files) data.append(field, new Blob([content]), filename);
  return data;
}
