import { endpoint, isRemoteInet } from '../helpers/addresses.js';
import { capturedHttpEndpoints, httpHeadOf } from '../helpers/http-requests.js';
import { regularity } from '../helpers/periodicity.js';
import { flowsOf } from '../helpers/report-data.js';
import { Signature, type EventOf, type SignatureContext, type SignatureInfo } from '../signature.js';

type Kind = 'net.connect' | 'net.send';

/** DNS and NTP repeat on their own. */
const HOUSEKEEPING_PORTS = new Set([53, 123]);

/**
 * Connections to the same host and port at regular intervals: how bots check in with their controller
 * over a protocol of their own. Each endpoint is judged on whichever source saw more of its connections,
 * the behaviour log or the capture. Endpoints that were sent HTTP requests are left to http_beaconing,
 * which judges those by what they ask and who asks.
 */
export class C2Beaconing extends Signature<Kind> {
  readonly info: SignatureInfo = {
    name: 'c2_beaconing',
    description: 'Connects to the same host at regular intervals, like a bot checking in with its controller',
    severity: 3,
    categories: ['c2', 'network'],
    ttp: ['T1095'],
  };
  override readonly kinds: readonly Kind[] = ['net.connect', 'net.send'];

  /** Connection times by address, then port (no key string built per connection). */
  readonly #logged = new Map<string, Map<number, number[]>>();
  /** Endpoints the behaviour log shows HTTP requests sent to. */
  readonly #http = new Set<string>();

  override onEvent(event: EventOf<Kind>): void {
    if (event.kind === 'net.send') {
      if (event.address && event.port !== undefined && httpHeadOf(event)) this.#http.add(endpoint(event.address, event.port));
      return;
    }
    if (!isRemoteInet(event.family, event.address) || HOUSEKEEPING_PORTS.has(event.port)) return;
    let byPort = this.#logged.get(event.address);
    if (!byPort) this.#logged.set(event.address, (byPort = new Map()));
    let times = byPort.get(event.port);
    if (!times) byPort.set(event.port, (times = []));
    times.push(event.ts);
  }

  override onComplete(ctx: SignatureContext): void {
    const captured = new Map<string, number[]>();
    for (const flow of flowsOf(ctx.report)) {
      if (!HOUSEKEEPING_PORTS.has(flow.dport)) push(captured, endpoint(flow.dst, flow.dport), flow.time);
    }
    const logged = new Map<string, number[]>();
    for (const [address, byPort] of this.#logged) for (const [port, times] of byPort) logged.set(endpoint(address, port), times);
    const http = new Set([...this.#http, ...capturedHttpEndpoints(ctx.report)]);
    for (const key of new Set([...logged.keys(), ...captured.keys()])) {
      if (http.has(key)) continue;
      const fromLog = logged.get(key) ?? [];
      const fromCapture = captured.get(key) ?? [];
      const beacon = regularity(fromLog.length >= fromCapture.length ? fromLog : fromCapture);
      if (beacon) this.markIoc('beacon', key, `${beacon.count} connections, one every ${beacon.interval.toFixed(1)} s`);
    }
  }
}

function push(map: Map<string, number[]>, key: string, value: number): void {
  const list = map.get(key) ?? [];
  list.push(value);
  map.set(key, list);
}
