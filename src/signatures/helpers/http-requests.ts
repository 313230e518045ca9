import type { Report } from '../../report/report-types.js';
import type { EventOf } from '../signature.js';
import { endpoint, isIpLiteral } from './addresses.js';

/** The head of an HTTP request as a send's first bytes show it (they may end before the headers do). */
export interface HttpHead {
  method: string;
  path: string;
  /** The Host header; undefined when the bytes seen end before it. */
  host?: string;
  /** The User-Agent header: '' when the complete head has none, undefined when the bytes seen end first. */
  userAgent?: string;
}

const REQUEST_LINE = /^([A-Z][A-Z-]{1,19}) (\S{1,8192}) HTTP\/\d\.\d\r?$/;

/** The request head a send's payload (hex, as the behaviour log keeps it) starts with, or null for other data. */
export function httpHeadOf(event: EventOf<'net.send'>): HttpHead | null {
  // A request starts with a capital letter (0x41 to 0x5a): other payloads are not decoded at all.
  if (!event.payload || !/^[45][0-9a-f]/i.test(event.payload)) return null;
  const text = Buffer.from(event.payload, 'hex').toString('latin1');
  const lines = text.split('\n');
  const request = REQUEST_LINE.exec(lines[0] ?? '');
  if (!request) return null;
  const complete = /\r?\n\r?\n/.test(text);
  const headers = new Map<string, string>();
  // The last line may be cut short, unless the head ended within the bytes seen.
  for (const line of complete ? lines.slice(1) : lines.slice(1, -1)) {
    const colon = line.indexOf(':');
    if (colon > 0) headers.set(line.slice(0, colon).trim().toLowerCase(), line.slice(colon + 1).trim());
  }
  const head: HttpHead = { method: request[1] ?? '', path: request[2] ?? '' };
  const host = headers.get('host');
  if (host !== undefined) head.host = host;
  const userAgent = headers.get('user-agent') ?? (complete ? '' : undefined);
  if (userAgent !== undefined) head.userAgent = userAgent;
  return head;
}

/** The IP addresses an HTTP Host header stands for: itself when it is one, else what the capture saw it resolve to. */
export function addressesOfHost(report: Report, host: string): string[] {
  const name = host.replace(/:\d+$/, '').replace(/^\[(.*)\]$/, '$1');
  if (isIpLiteral(host)) return [name];
  const lower = name.toLowerCase();
  const network = report.network;
  const resolved = [
    ...(network?.domains ?? []).filter((entry) => entry.domain.toLowerCase() === lower).map((entry) => entry.ip),
    ...(network?.dns ?? []).filter((query) => query.request.toLowerCase() === lower).flatMap((query) => query.answers.filter((answer) => answer.type === 'A' || answer.type === 'AAAA').map((answer) => answer.data)),
  ];
  return [...new Set(resolved)];
}

/** The endpoints (address:port) the capture saw HTTP requests go to. */
export function capturedHttpEndpoints(report: Report): Set<string> {
  const endpoints = new Set<string>();
  for (const request of report.network?.http ?? []) {
    for (const address of addressesOfHost(report, request.host)) endpoints.add(endpoint(address, request.port));
  }
  return endpoints;
}
