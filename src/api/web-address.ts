import { isIP } from 'node:net';
import { domainToASCII } from 'node:url';

/**
 * What counts as a web address a task may open. The host is judged as the client wrote it, not as the
 * WHATWG URL parser rewrites it: that parser reads `http://0000123` or `http://0x53` as IPv4 numbers
 * (0.0.0.83), so a line of junk would become an address nobody meant.
 */

const LABEL = '[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?';
/** Labels, then a top-level domain of letters (or its punycode form); a final dot is allowed. */
const DOMAIN = new RegExp(`^(?:${LABEL}\\.)+(?:[a-z]{2,63}|xn--[a-z0-9-]{1,59})\\.?$`, 'i');
/** Dotted-quad IPv4 only, octets without leading zeros, as Django's URL validator takes them. */
const IPV4 = /^(?:(?:25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)\.){3}(?:25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)$/;
const PORT = /^\d{0,5}$/;

/** A domain name with a top-level domain; internationalised names are judged by their punycode form. */
function isDomainName(host: string): boolean {
  const ascii = /^[\x00-\x7f]*$/.test(host) ? host : domainToASCII(host);
  return ascii.length > 0 && ascii.length <= 254 && DOMAIN.test(ascii);
}

/** A host as written in a URL: a domain name, `localhost`, a dotted-quad IPv4 or a bracketed IPv6 address. */
function isWrittenHost(host: string): boolean {
  if (host.startsWith('[') && host.endsWith(']')) return isIP(host.slice(1, -1)) === 6;
  return host.toLowerCase() === 'localhost' || IPV4.test(host) || isDomainName(host);
}

/** The authority as written (between `scheme://` and the path), split into user info, host and port. */
function authorityOf(text: string): { userinfo: boolean; host: string; port: string } {
  const authority = /^[a-z]+:\/\/([^/?#\\]*)/i.exec(text)?.[1] ?? '';
  const at = authority.lastIndexOf('@');
  const hostPort = authority.slice(at + 1);
  const portAt = hostPort.startsWith('[') ? hostPort.indexOf(']') + 1 : hostPort.lastIndexOf(':');
  if (portAt <= 0 || hostPort[portAt] !== ':') return { userinfo: at >= 0, host: hostPort, port: '' };
  return { userinfo: at >= 0, host: hostPort.slice(0, portAt), port: hostPort.slice(portAt + 1) };
}

/**
 * An absolute http(s) URL whose host, as written, is a domain name with a top-level domain, `localhost`
 * or an IP address, like the URL validator Cuckoo uses for submissions.
 */
export function isHttpUrl(text: string): boolean {
  if (!/^https?:\/\//i.test(text) || /[\s\u0000-\u001f\u007f]/.test(text)) return false;
  try {
    new URL(text);
  } catch {
    return false;
  }
  const { host, port } = authorityOf(text);
  return PORT.test(port) && Number(port || 0) <= 65535 && isWrittenHost(host);
}

/**
 * A web address written without a scheme (`evil.example`, `evil.example:8080/x`, `192.0.2.1/a`) as the
 * http:// URL it means; undefined for anything else. User info is refused: `someone@evil.example` is
 * a mail address, not a page.
 */
export function bareWebAddress(text: string): string | undefined {
  if (text.includes('://')) return undefined;
  const url = `http://${text}`;
  if (!isHttpUrl(url) || authorityOf(url).userinfo) return undefined;
  return url;
}
