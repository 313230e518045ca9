import type { BehaviorEvent } from '../../report/events.js';
import { Signature, type EventOf, type SignatureContext, type SignatureInfo } from '../signature.js';
import { isWineLoader } from '../helpers/wine-processes.js';

type Kind = 'process.fork' | 'process.exit' | 'system.call';

/**
 * A process that makes itself a daemon: a forked child starts a session of its own (setsid) and cuts its
 * last tie to whoever started it, by outliving its exited parent or by forking again (the double fork,
 * so that the daemon can never regain a terminal). Only processes whose program the trace saw executed
 * count: whatever ran before the sample (nestbox's own launch) is never a daemon of the sample's. Nor is
 * a Windows program's child that Wine's loader starts in a session of its own.
 */
export class Daemonize extends Signature<Kind> {
  readonly info: SignatureInfo = {
    name: 'daemonize',
    description: 'Detaches itself from its parent and terminal to run in the background (daemonizes)',
    severity: 2,
    categories: ['stealth'],
    ttp: ['T1564'],
  };
  override readonly kinds: readonly Kind[] = ['process.fork', 'process.exit', 'system.call'];

  readonly #parents = new Map<number, number>();
  readonly #exited = new Set<number>();
  /** Session leaders made by setsid, with their setsid call. */
  readonly #leaders = new Map<number, BehaviorEvent>();

  override onEvent(event: EventOf<Kind>, ctx: SignatureContext): void {
    switch (event.kind) {
      case 'process.fork': {
        this.#parents.set(event.child, event.pid);
        const setsid = this.#leaders.get(event.pid);
        if (setsid) this.#detached(setsid, event, ctx);
        break;
      }
      case 'process.exit':
        this.#exited.add(event.pid);
        for (const [pid, setsid] of this.#leaders) {
          if (this.#parents.get(pid) === event.pid && !this.#exited.has(pid)) this.#detached(setsid, event, ctx);
        }
        break;
      case 'system.call':
        if (event.api === 'setsid' && event.ret >= 0) this.#setsid(event, ctx);
        break;
    }
  }

  #setsid(event: EventOf<'system.call'>, ctx: SignatureContext): void {
    const parent = this.#parents.get(event.pid);
    if (parent === undefined || !ctx.processes.get(event.pid)?.path || isWineLoader(event.pid, ctx.processes)) return;
    this.#leaders.set(event.pid, event);
    if (this.#exited.has(parent)) this.markEvent(event, ctx);
  }

  #detached(setsid: BehaviorEvent, detaching: BehaviorEvent, ctx: SignatureContext): void {
    this.markEvent(setsid, ctx);
    this.markEvent(detaching, ctx);
  }
}
