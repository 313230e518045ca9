import type { AppContext } from '../../app.js';
import type { NodeRow } from '../../db/schema.js';
import { RemoteNodeClient } from './client.js';
import { collectFinished } from './collect.js';
import { delegatePending, requeueUnrecorded } from './delegate.js';

/** The driver of each running service, so that the API can wake it (a node added, a task pinned). */
const drivers = new WeakMap<AppContext, RemoteNodeDriver>();

/** Makes the main node look at its remote nodes now; nothing when this process drives none. */
export function wakeRemoteNodes(ctx: AppContext): void {
  drivers.get(ctx)?.wake();
}

/**
 * The main node's loop over the remote nodes added through Cuckoo's distributed API: every
 * `cluster.remote_poll_seconds` it hands each enabled node its pending tasks, collects the results of
 * the tasks every remote node runs, and keeps each enabled node's /cuckoo/status. Without remote nodes
 * it rests until the API wakes it.
 */
export class RemoteNodeDriver {
  private timer: NodeJS.Timeout | undefined;
  private cycle: Promise<void> | undefined;
  private again = false;
  private stopped = false;
  private started = false;

  constructor(private readonly ctx: AppContext) {}

  start(): void {
    drivers.set(this.ctx, this);
    this.wake();
  }

  wake(): void {
    if (this.stopped) return;
    if (this.cycle) {
      this.again = true;
      return;
    }
    clearTimeout(this.timer);
    this.cycle = this.runCycle()
      .catch((error: unknown) => {
        this.ctx.log.error({ err: error }, 'looking at the remote nodes failed');
        return true;
      })
      .then((more) => {
        this.cycle = undefined;
        if (this.stopped) return;
        if (this.again) {
          this.again = false;
          this.wake();
        } else if (more) {
          this.timer = setTimeout(() => this.wake(), this.ctx.config.cluster.remote_poll_seconds * 1000);
        }
      });
  }

  async stop(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.timer);
    await this.cycle;
    if (drivers.get(this.ctx) === this) drivers.delete(this.ctx);
  }

  /** One look at every remote node; true when there are remote nodes to look at again. */
  private async runCycle(): Promise<boolean> {
    const nodes = await this.ctx.stores.distributedNodes.remotes();
    if (!this.started) {
      this.started = true;
      await requeueUnrecorded(this.ctx, nodes);
    }
    for (const node of nodes) {
      if (this.stopped) break;
      await this.visit(node).catch((error: unknown) => this.ctx.log.warn({ err: error, node: node.name }, 'a remote node could not be driven'));
    }
    return nodes.length > 0;
  }

  /**
   * A disabled node gets no new tasks, but what it already runs is still collected. A node that did not
   * answer for its status is handed nothing this time: its tasks stay waiting for it (`assigned`), rather
   * than being taken and given back on every look.
   */
  private async visit(node: NodeRow): Promise<void> {
    if (node.enabled === 1 && (await this.keepStatus(node))) await delegatePending(this.ctx, node);
    await collectFinished(this.ctx, node);
  }

  /** For GET /api/status; a node that does not answer keeps its last status. False when it did not answer. */
  private async keepStatus(node: NodeRow): Promise<boolean> {
    try {
      const status = await new RemoteNodeClient(node).status();
      await this.ctx.stores.distributedNodes.update(node.name, { status: JSON.stringify({ ...status, timestamp: Math.floor(Date.now() / 1000) }) });
      return true;
    } catch (error) {
      this.ctx.log.warn({ err: error, node: node.name }, 'the status of a remote node could not be read');
      return false;
    }
  }
}
