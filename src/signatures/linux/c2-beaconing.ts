import { isRemoteInet } from '../helpers/addresses.js';
import { flowsOf } from '../helpers/report-data.js';
import { Signature, type EventOf, type SignatureContext, type SignatureInfo } from '../signature.js';

/** At least this many connections to one endpoint, */
const MIN_CONNECTIONS = 4;
/** at least this far apart on average (seconds), */
const MIN_INTERVAL = 1;
/** with intervals varying by at most this fraction of their mean (malware adds some jitter). */
const MAX_JITTER = 0.25;
/** DNS and NTP repeat on their own. */
const HOUSEKEEPING_PORTS = new Set([53, 123]);

/**
 * Connections to the same host and port at regular intervals: how bots check in with their controller.
 * Each endpoint is judged on whichever source saw more of its connections, the behaviour log or the capture.
 */
export class C2Beaconing extends Signature<'net.connect'> {
  readonly info: SignatureInfo = {
    name: 'c2_beaconing',
    description: 'Connects to the same host at regular intervals, like a bot checking in with its controller',
    severity: 3,
    categories: ['c2', 'network'],
    ttp: ['T1071'],
  };
  override readonly kinds = ['net.connect'] as const;

  /** Connection times by address, then port (no key string built per connection). */
  readonly #logged = new Map<string, Map<number, number[]>>();

  override onEvent(event: EventOf<'net.connect'>): void {
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
    for (const key of new Set([...logged.keys(), ...captured.keys()])) {
      const fromLog = logged.get(key) ?? [];
      const fromCapture = captured.get(key) ?? [];
      const beacon = regularity(fromLog.length >= fromCapture.length ? fromLog : fromCapture);
      if (beacon) this.markIoc('beacon', key, `${beacon.count} connections, one every ${beacon.interval.toFixed(1)} s`);
    }
  }
}

export function regularity(times: readonly number[]): { count: number; interval: number } | null {
  if (times.length < MIN_CONNECTIONS) return null;
  const sorted = [...times].sort((a, b) => a - b);
  const gaps = sorted.slice(1).map((time, index) => time - (sorted[index] ?? time));
  const mean = gaps.reduce((sum, gap) => sum + gap, 0) / gaps.length;
  if (mean < MIN_INTERVAL) return null;
  const deviation = Math.sqrt(gaps.reduce((sum, gap) => sum + (gap - mean) ** 2, 0) / gaps.length);
  return deviation / mean <= MAX_JITTER ? { count: sorted.length, interval: mean } : null;
}

function endpoint(address: string, port: number): string {
  return address.includes(':') ? `[${address}]:${port}` : `${address}:${port}`;
}

function push(map: Map<string, number[]>, key: string, value: number): void {
  const list = map.get(key) ?? [];
  list.push(value);
  map.set(key, list);
}
