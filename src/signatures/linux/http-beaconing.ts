import type { BehaviorEvent } from '../../report/events.js';
import { endpoint, isRemoteInet } from '../helpers/addresses.js';
import { addressesOfHost, httpHeadOf } from '../helpers/http-requests.js';
import { basename } from '../helpers/paths.js';
import { regularity, type Regularity } from '../helpers/periodicity.js';
import { flowsOf } from '../helpers/report-data.js';
import { Signature, type EventOf, type SignatureContext, type SignatureInfo } from '../signature.js';

/** The User-Agents HTTP tools and libraries send by default: programs polling with these are ordinary clients. */
const TOOL_AGENT =
  /^(curl|wget|python-requests|python-urllib|python-httpx|aiohttp|libwww-perl|lwp-|go-http-client|java|apache-httpclient|okhttp|node-fetch|node|undici|axios|ruby|php|git|apt|debian apt|pip|npm|yarn|httpie|powershell|microsoft-cryptoapi|microsoft ncsi|windows-update-agent)\b/i;
const BROWSER_AGENT = /^Mozilla\/\d/;
const BROWSER = /^(firefox|firefox-esr|chrome|chromium|chromium-browser|google-chrome|epiphany|midori|falkon|konqueror|opera|brave)$/;

interface Polled {
  url: string;
  method: string;
  times: number[];
  /** The User-Agent of each request, with the program that sent it when known. */
  agents: Array<{ agent: string; program?: string }>;
  sends: BehaviorEvent[];
}

/**
 * The same HTTP request (method, host and path) sent again and again at a regular interval, by a client
 * that does not say it is a browser or a common HTTP tool (a User-Agent of its own, none at all, or a
 * browser's from a program that is no browser): how HTTP bots poll their controller for commands. Read from
 * the sends of the behaviour log (their first bytes and times) and from the capture (its HTTP requests,
 * timed by their flows), judging each request on whichever saw more of it. Ordinary clients run in a loop
 * by scripts keep their tool's User-Agent and do not match.
 */
export class HttpBeaconing extends Signature<'net.send'> {
  readonly info: SignatureInfo = {
    name: 'http_beaconing',
    description: 'Sends the same HTTP request at regular intervals with an unusual User-Agent, like a bot polling its controller',
    severity: 5,
    categories: ['c2', 'network'],
    ttp: ['T1071.001'],
  };
  override readonly kinds = ['net.send'] as const;

  readonly #logged = new Map<string, Polled>();

  override onEvent(event: EventOf<'net.send'>, ctx: SignatureContext): void {
    if (!isRemoteInet(event.family ?? '', event.address ?? '')) return;
    const head = httpHeadOf(event);
    if (!head) return;
    const url = urlOf(head.host, event.address ?? '', event.port ?? 80, head.path);
    const key = `${head.method} ${url}`;
    let polled = this.#logged.get(key);
    if (!polled) this.#logged.set(key, (polled = { url, method: head.method, times: [], agents: [], sends: [] }));
    polled.times.push(event.ts);
    polled.sends.push(event);
    const program = ctx.processes.get(event.pid)?.path;
    if (head.userAgent !== undefined) polled.agents.push({ agent: head.userAgent, ...(program ? { program } : {}) });
  }

  override onComplete(ctx: SignatureContext): void {
    const captured = capturedPolls(ctx);
    for (const key of new Set([...this.#logged.keys(), ...captured.keys()])) {
      const fromLog = this.#logged.get(key);
      const fromCapture = captured.get(key);
      const polled = (fromLog?.times.length ?? 0) >= (fromCapture?.times.length ?? 0) ? fromLog : fromCapture;
      const beacon = polled && regularity(polled.times);
      const odd = polled?.agents.find(({ agent, program }) => unusualAgent(agent, program));
      if (!polled || !beacon || !odd) continue;
      this.markIoc('url', polled.url, describe(polled, beacon, odd.agent));
      for (const send of polled.sends) this.markEvent(send, ctx);
    }
  }
}

/** The capture's repeated requests, timed by the TCP flows to the addresses their host stands for. */
function capturedPolls(ctx: SignatureContext): Map<string, Polled> {
  const polls = new Map<string, Polled>();
  const flows = flowsOf(ctx.report).filter((flow) => flow.protocol === 'tcp');
  for (const request of ctx.report.network?.http ?? []) {
    if (request.count < 2) continue;
    const endpoints = new Set(addressesOfHost(ctx.report, request.host).map((address) => endpoint(address, request.port)));
    const times = flows.filter((flow) => endpoints.has(endpoint(flow.dst, flow.dport))).map((flow) => flow.time);
    const url = request.uri || `http://${request.host}${request.path}`;
    // Flows to the endpoint may carry other requests too: at most as many as this request was sent.
    polls.set(`${request.method} ${url}`, { url, method: request.method, times: times.slice(0, request.count), agents: [{ agent: request['user-agent'] }], sends: [] });
  }
  return polls;
}

/** The URL as the capture's analysis writes it, so that both sources name a request alike. */
function urlOf(host: string | undefined, address: string, port: number, path: string): string {
  if (/^[a-z][a-z0-9+.-]*:\/\//i.test(path)) return path;
  const named = host || (address.includes(':') ? `[${address}]` : address);
  const netloc = port !== 80 && !/:\d+$/.test(named.replace(/^\[[^\]]*\]$/, '')) ? `${named}:${port}` : named;
  return `http://${netloc}${path.startsWith('/') ? '' : '/'}${path}`;
}

function unusualAgent(agent: string, program: string | undefined): boolean {
  if (agent === '') return true;
  if (TOOL_AGENT.test(agent)) return false;
  return !(BROWSER_AGENT.test(agent) && (program === undefined || BROWSER.test(basename(program))));
}

function describe(polled: Polled, beacon: Regularity, agent: string): string {
  const who = agent === '' ? 'no User-Agent' : `User-Agent ${JSON.stringify(agent)}`;
  return `${beacon.count} ${polled.method} requests, one every ${beacon.interval.toFixed(1)} s (jitter ${Math.round(beacon.jitter * 100)}%), ${who}`;
}
