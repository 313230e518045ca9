import { isIP } from 'node:net';

/** Whether an address stays on the machine (loopback or unspecified). */
export function isLocalAddress(address: string): boolean {
  // Prefix checks rather than a pattern: this runs for every connection of the log, in several signatures.
  return address.startsWith('127.') || address.startsWith('::ffff:127.') || address === '::1' || address === '0.0.0.0' || address === '::';
}

/** Whether a host (as in an HTTP Host header, with or without a port) is an IP address rather than a name. */
export function isIpLiteral(host: string): boolean {
  const bracketed = /^\[([^\]]+)\](:\d+)?$/.exec(host);
  if (bracketed) return isIP(bracketed[1] ?? '') !== 0;
  return isIP(host) !== 0 || isIP(host.replace(/:\d+$/, '')) === 4;
}

/** Whether a connection goes to another machine over IP. */
export function isRemoteInet(family: string, address: string): boolean {
  return (family === 'inet' || family === 'inet6') && !isLocalAddress(address);
}

/** address:port, with an IPv6 address in brackets. */
export function endpoint(address: string, port: number): string {
  return address.includes(':') ? `[${address}]:${port}` : `${address}:${port}`;
}
