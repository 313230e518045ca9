import type { AppContext } from '../app.js';
import { serverStatus } from '../api/routes/status.js';
import { TASK_STATUSES } from '../db/schema.js';
import { taskListRows } from './task-rows.js';

const RECENT_TASKS = 10;

/** Everything the dashboard shows: /cuckoo/status (with the nodes), tasks by state, machines and the latest tasks. */
export async function dashboardOf(ctx: AppContext) {
  const [status, counts, machines, running, recent] = await Promise.all([
    serverStatus(ctx),
    ctx.stores.tasks.countByStatus(),
    ctx.stores.machines.list(),
    ctx.stores.guests.currentTasks(),
    ctx.stores.taskPages.page({ sort: 'added_on', order: 'desc', page: 1, pageSize: RECENT_TASKS }),
  ]);
  return {
    status,
    tasksByState: Object.fromEntries(TASK_STATUSES.map((state) => [state, counts[state] ?? 0])),
    machines: machines.map((machine) => ({
      name: machine.name,
      label: machine.label,
      node: machine.node,
      platform: machine.platform,
      locked: machine.locked === 1,
      task: running.get(machine.name) ?? null,
      status: machine.status,
    })),
    recent: await taskListRows(ctx.stores, recent.rows),
  };
}

export interface FeedTiming {
  /** How often the database's change token is looked at. */
  pollMs: number;
  /** Load and disk space change without any write: the dashboard is sent again this often anyway. */
  refreshMs: number;
}

const DEFAULT_TIMING: FeedTiming = { pollMs: 500, refreshMs: 30_000 };

/**
 * The dashboard as JSON text, made again whenever the database's change token moves (any write, by
 * this process or another on the same database) and handed to every subscriber. One feed serves every
 * open stream, and it looks at the database only while someone listens.
 */
export class DashboardFeed {
  private readonly listeners = new Set<(json: string) => void>();
  private timer: NodeJS.Timeout | undefined;
  /** Null until the feed has made the dashboard once since it started. */
  private lastToken: string | undefined | null = null;
  private lastBuilt = 0;
  private building = false;

  constructor(
    private readonly ctx: AppContext,
    private readonly timing: FeedTiming = DEFAULT_TIMING,
  ) {}

  /** Listens from now on; returns the function that stops listening. */
  subscribe(listener: (json: string) => void): () => void {
    this.listeners.add(listener);
    if (this.timer === undefined) this.start();
    return () => {
      this.listeners.delete(listener);
      if (this.listeners.size === 0) this.stop();
    };
  }

  stop(): void {
    clearInterval(this.timer);
    this.timer = undefined;
  }

  private start(): void {
    // A subscriber's first dashboard was made before it subscribed: the first tick sends one made after.
    this.lastToken = null;
    this.timer = setInterval(() => void this.tick(), this.timing.pollMs);
    this.timer.unref();
  }

  private async tick(): Promise<void> {
    if (this.building) return;
    // Taken before reading, so a write made while the dashboard is built is sent on the next tick.
    const token = this.ctx.dataChangeToken();
    if (!this.due(token)) return;
    this.building = true;
    try {
      this.lastToken = token;
      this.lastBuilt = Date.now();
      const json = JSON.stringify(await dashboardOf(this.ctx));
      for (const listener of this.listeners) listener(json);
    } catch (error) {
      this.ctx.log.warn({ err: error }, 'the dashboard could not be made');
    } finally {
      this.building = false;
    }
  }

  private due(token: string | undefined): boolean {
    const age = Date.now() - this.lastBuilt;
    if (this.lastToken === null || age >= this.timing.refreshMs) return true;
    // Without a token (a PostgreSQL node not listening) changes cannot be seen: made again by time.
    if (token === undefined) return age >= UNKNOWN_CHANGES_MS;
    return token !== this.lastToken;
  }
}

/** How often the dashboard is made when the database cannot say whether it changed. */
const UNKNOWN_CHANGES_MS = 5000;
