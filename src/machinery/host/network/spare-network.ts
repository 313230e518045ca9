import type { Logger } from 'pino';
import type { Route } from '../../types.js';
import { machineId } from '../machine-id.js';
import { prepareTaskNetwork, type PreparedNetwork } from './task-network.js';

/**
 * Keeps one task network ready for a machine's next task, made while the machine is idle: building one
 * (namespaces, rules, capture, the fake internet's process) is most of what starting a machine costs.
 *
 * A spare is a fresh network no process has used: each task still gets its own, and a spare that no
 * task takes is removed by close(). Only routes that live wholly inside the task's namespaces are kept
 * ready; `internet` touches the host and is made for its task.
 */
const KEPT_ROUTES: readonly Route[] = ['inetsim', 'none', 'drop'];

interface Spare {
  route: Route;
  ready: Promise<PreparedNetwork | null>;
}

export class SpareNetwork {
  private spare: Spare | null = null;
  /** Spares being removed, which close() waits for. */
  private readonly dropping = new Set<Promise<void>>();
  private closed = false;

  constructor(
    /** A fresh id for each network (it also names the machine that takes it). */
    private readonly newId: () => string,
    private readonly log: Logger,
  ) {}

  /** A machine's spare, the first one started now for `route` (the route most tasks take). */
  static startedFor(route: Route, log: Logger): SpareNetwork {
    const spare = new SpareNetwork(() => machineId(0), log);
    spare.refill(route);
    return spare;
  }

  /** Starts making a network for `route`, unless one is there; one for another route is removed. */
  refill(route: Route): void {
    if (this.closed || !KEPT_ROUTES.includes(route) || this.spare?.route === route) return;
    void this.drop();
    const ready = prepareTaskNetwork({ id: this.newId(), route, internetInterface: '', log: this.log }).catch((error: unknown) => {
      this.log.warn({ err: error, route }, 'could not prepare a task network ahead');
      return null;
    });
    this.spare = { route, ready };
  }

  /** The spare for `route` (waited for if it is still being made), or null: the caller then makes one. */
  async take(route: Route): Promise<PreparedNetwork | null> {
    if (this.spare?.route !== route) return null;
    const { ready } = this.spare;
    this.spare = null;
    return ready;
  }

  /** Removes the spare; none is made after. */
  async close(): Promise<void> {
    this.closed = true;
    void this.drop();
    await Promise.all(this.dropping);
  }

  private drop(): Promise<void> {
    const spare = this.spare;
    this.spare = null;
    if (!spare) return Promise.resolve();
    const dropping = spare.ready.then((network) => network?.discard());
    this.dropping.add(dropping);
    return dropping.finally(() => this.dropping.delete(dropping));
  }
}
