import pg from 'pg';
import { CHANGE_CHANNEL } from './migrations/0002-change-notify.js';

const RECONNECT_MS = 1000;

/**
 * The change token of a PostgreSQL database that several nodes may write. Triggers notify after every
 * committed change (migration 0002); one connection of our own listens and bumps a counter. Our own
 * writes bump it too, as soon as each statement returns, so a client that reads right after its write
 * never gets an answer cached before it. Other nodes' writes are seen when their notification arrives,
 * milliseconds after their commit. While the listening connection is down there is no token, which
 * turns caching off, and reconnecting bumps the counter over whatever was missed.
 */
export class ChangeListener {
  private version = 0;
  private client: pg.Client | undefined;
  private retry: NodeJS.Timeout | undefined;
  private closed = false;

  /** `channel`: what to listen to (the data changes by default); `onNotify` runs on each notification and on each (re)connection. */
  constructor(
    private readonly connection: string,
    private readonly channel: string = CHANGE_CHANNEL,
    private readonly onNotify: () => void = () => undefined,
  ) {}

  /** Resolves once listening (or after the first failure; it keeps trying in the background). */
  async start(): Promise<void> {
    const client = new pg.Client({ connectionString: this.connection });
    client.on('notification', () => {
      this.version++;
      this.onNotify();
    });
    client.on('error', () => this.lost(client));
    client.on('end', () => this.lost(client));
    try {
      await client.connect();
      await client.query(`LISTEN ${this.channel}`);
      if (this.closed) return void (await client.end());
      this.version++;
      this.client = client;
      // Whatever was notified while not listening is looked at now.
      this.onNotify();
    } catch {
      this.lost(client);
    }
  }

  /** Undefined while not listening: nothing may be cached then. */
  token(): string | undefined {
    return this.client === undefined ? undefined : String(this.version);
  }

  /** Watches every connection of `pool`, so that writes made through it change the token. */
  watchWrites(pool: pg.Pool): void {
    pool.on('connect', (client) => {
      const query = client.query.bind(client) as (...args: unknown[]) => unknown;
      (client as { query: unknown }).query = (...args: unknown[]) => {
        const result = query(...args);
        if (!isRead(args[0]) && result instanceof Promise) {
          // After the statement (or the COMMIT) has returned, failed or not.
          return result.finally(() => this.version++);
        }
        return result;
      };
    });
  }

  async close(): Promise<void> {
    this.closed = true;
    clearTimeout(this.retry);
    const client = this.client;
    this.client = undefined;
    await client?.end().catch(() => undefined);
  }

  private lost(client: pg.Client): void {
    if (this.client === client) this.client = undefined;
    client.removeAllListeners('end');
    void client.end().catch(() => undefined);
    if (this.closed || this.retry !== undefined) return;
    this.retry = setTimeout(() => {
      this.retry = undefined;
      void this.start();
    }, RECONNECT_MS);
    this.retry.unref();
  }
}

function isRead(query: unknown): boolean {
  const text = typeof query === 'string' ? query : (query as { text?: unknown } | undefined)?.text;
  return typeof text === 'string' && /^\s*select\b/i.test(text);
}
