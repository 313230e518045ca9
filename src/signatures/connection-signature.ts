import type { EventKind } from '../report/events.js';
import { isLocalAddress, isRemoteInet } from './helpers/addresses.js';
import { flowsOf } from './helpers/report-data.js';
import { Signature, type EventOf, type SignatureContext } from './signature.js';

/**
 * A signature about connections to certain ports: it marks such connect calls from the behaviour log and such
 * flows from the network capture (which also sees what the log missed, e.g. from processes started before
 * tracing). Subclasses say which ports, and may add what other report sections show.
 */

/** The ports a connection signature is about: a Set, or an object whose `has` tests a range. */
export interface Ports {
  has(port: number): boolean;
}

export abstract class ConnectionSignature<Extra extends EventKind = never> extends Signature<'net.connect' | Extra> {
  override readonly kinds: readonly ('net.connect' | Extra)[];
  /** Whether connections on the machine itself count (local proxies such as Tor's SOCKS port). */
  protected readonly includeLocal: boolean = false;

  constructor(extraKinds: readonly Extra[] = []) {
    super();
    this.kinds = ['net.connect', ...extraKinds];
  }

  protected abstract readonly ports: Ports;

  override onEvent(anyEvent: EventOf<'net.connect' | Extra>, ctx: SignatureContext): void {
    if (anyEvent.kind !== 'net.connect') return;
    const event = anyEvent as EventOf<'net.connect'>;
    const reachable = this.includeLocal ? event.family === 'inet' || event.family === 'inet6' : isRemoteInet(event.family, event.address);
    if (reachable && this.ports.has(event.port)) this.markEvent(event, ctx);
  }

  override onComplete(ctx: SignatureContext): void {
    for (const flow of flowsOf(ctx.report)) {
      if (this.ports.has(flow.dport) && (this.includeLocal || !isLocalAddress(flow.dst))) {
        this.markIoc('connection', `${flow.dst}:${flow.dport}`, `${flow.protocol} flow in the capture`);
      }
    }
  }
}
