import type { AppContext } from '../app.js';
import { NestboxError } from '../errors.js';
import { NESTBOX_RELEASE } from '../version.js';

/**
 * This node in the cluster: its row in `nodes` (name, role, version, API address), renewed by a heartbeat
 * every cluster.heartbeat_seconds, which extends the node's lease to cluster.lease_seconds from now. The
 * lease covers every task the node runs and every machine it has locked. On PostgreSQL, each heartbeat
 * also looks for nodes whose lease ran out while they held work, and gives that work back to the queue.
 */
export class NodeRegistry {
  private timer: NodeJS.Timeout | undefined;
  private beating: Promise<void> | undefined;
  private url = '';

  /** `onBeat`: more work for each heartbeat, after the lease recovery (see createService). */
  constructor(
    private readonly ctx: AppContext,
    private readonly onBeat: () => Promise<unknown> = () => Promise.resolve(),
  ) {
    const { heartbeat_seconds: heartbeat, lease_seconds: lease } = ctx.config.cluster;
    if (lease <= heartbeat) {
      throw new NestboxError('invalid_config', `cluster.lease_seconds (${lease}) must be longer than cluster.heartbeat_seconds (${heartbeat}), or every node's lease would lapse between its heartbeats`);
    }
  }

  get name(): string {
    return this.ctx.node.node;
  }

  async start(): Promise<void> {
    await this.register();
    // A heartbeat still under way when the next is due is enough: the timer does not queue another.
    this.timer = setInterval(() => void (this.beating ?? this.beat()), this.ctx.config.cluster.heartbeat_seconds * 1000);
    // The API server keeps a node alive, not its heartbeat.
    this.timer.unref();
  }

  /** The address this node's API answers on, once it listens. */
  async setUrl(url: string): Promise<void> {
    this.url = url;
    await this.ctx.stores.nodes.setUrl(this.name, url);
  }

  /** Stops heartbeating and gives the lease up: others see the node as down at once. */
  async stop(): Promise<void> {
    clearInterval(this.timer);
    await this.beating;
    const now = new Date().toISOString();
    await this.ctx.stores.nodes.heartbeat(this.name, now, now).catch(() => undefined);
  }

  /**
   * One heartbeat that starts now; resolves when it and the lease recovery it runs are done. A heartbeat
   * already under way may have read the database before the caller's change: it is waited for first.
   */
  async beat(): Promise<void> {
    while (this.beating) await this.beating;
    this.beating = this.renewAndRecover()
      .catch((error) => this.ctx.log.error({ err: error }, 'heartbeat failed'))
      .finally(() => (this.beating = undefined));
    return this.beating;
  }

  private async register(): Promise<void> {
    const { role } = this.ctx.config.cluster;
    const now = new Date();
    await this.ctx.stores.nodes.register({ name: this.name, role, url: this.url, version: NESTBOX_RELEASE }, now.toISOString(), this.leaseFrom(now));
  }

  private async renewAndRecover(): Promise<void> {
    const now = new Date();
    if (!(await this.ctx.stores.nodes.heartbeat(this.name, now.toISOString(), this.leaseFrom(now)))) await this.register();
    if (this.ctx.databaseKind !== 'postgres') return;
    const recovered = await this.ctx.stores.nodes.recoverExpired(this.name, now.toISOString());
    for (const lease of recovered) {
      this.ctx.log.warn({ node: lease.node, leaseExpiredOn: lease.leaseExpiredOn, tasks: lease.taskIds, machines: lease.machineIds }, 'requeued the work of a node whose lease expired');
    }
    await this.onBeat();
  }

  private leaseFrom(now: Date): string {
    return new Date(now.getTime() + this.ctx.config.cluster.lease_seconds * 1000).toISOString();
  }
}
