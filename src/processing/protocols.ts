/**
 * Application protocols recognised in reassembled client-to-server TCP data, by content rather than
 * port, since malware uses any port: HTTP requests, the TLS ClientHello's server name, SMTP dialogues
 * and IRC commands.
 */

export interface HttpRequest {
  method: string;
  path: string;
  version: string;
  headers: Map<string, string>;
  body: Buffer;
  /** The request as sent: request line, headers and body. */
  raw: Buffer;
}

const REQUEST_LINE = /^([A-Z][A-Z-]{1,19}) (\S{1,8192}) HTTP\/(\d\.\d)\r?$/;
const MAX_REQUESTS = 1000;

export function looksLikeHttp(data: Buffer): boolean {
  const end = data.indexOf('\n');
  return REQUEST_LINE.test(data.toString('latin1', 0, end < 0 ? Math.min(data.length, 8300) : end));
}

/** Every request of a (possibly keep-alive) client stream; stops at the first thing that is not one. */
export function parseHttpRequests(data: Buffer): HttpRequest[] {
  const requests: HttpRequest[] = [];
  let offset = 0;
  while (offset < data.length && requests.length < MAX_REQUESTS) {
    const headerEnd = findHeaderEnd(data, offset);
    if (headerEnd === undefined) break;
    const lines = data.toString('latin1', offset, headerEnd.start).split(/\r?\n/);
    const match = REQUEST_LINE.exec(lines[0] ?? '');
    if (!match) break;
    const headers = new Map<string, string>();
    for (const line of lines.slice(1)) {
      const colon = line.indexOf(':');
      if (colon > 0) headers.set(line.slice(0, colon).trim().toLowerCase(), line.slice(colon + 1).trim());
    }
    const bodyStart = headerEnd.end;
    const bodyLength = bodyLengthOf(headers, data, bodyStart);
    const bodyEnd = Math.min(bodyStart + bodyLength, data.length);
    requests.push({
      method: match[1]!,
      path: match[2]!,
      version: match[3]!,
      headers,
      body: data.subarray(bodyStart, bodyEnd),
      raw: data.subarray(offset, bodyEnd),
    });
    offset = bodyEnd;
  }
  return requests;
}

function findHeaderEnd(data: Buffer, from: number): { start: number; end: number } | undefined {
  const crlf = data.indexOf('\r\n\r\n', from);
  const lf = data.indexOf('\n\n', from);
  if (crlf >= 0 && (lf < 0 || crlf <= lf)) return { start: crlf, end: crlf + 4 };
  if (lf >= 0) return { start: lf, end: lf + 2 };
  // Headers cut off by the end of the capture: take what there is.
  return data.length > from ? { start: data.length, end: data.length } : undefined;
}

function bodyLengthOf(headers: Map<string, string>, data: Buffer, start: number): number {
  const length = Number.parseInt(headers.get('content-length') ?? '', 10);
  if (Number.isFinite(length) && length >= 0) return length;
  if (headers.get('transfer-encoding')?.toLowerCase().includes('chunked')) return chunkedLength(data, start);
  return 0;
}

/** Bytes taken by a chunked body, final chunk and trailers included. */
function chunkedLength(data: Buffer, start: number): number {
  let offset = start;
  for (;;) {
    const lineEnd = data.indexOf('\r\n', offset);
    if (lineEnd < 0) return data.length - start;
    const size = Number.parseInt(data.toString('latin1', offset, lineEnd), 16);
    if (!Number.isFinite(size)) return data.length - start;
    offset = lineEnd + 2 + size + 2;
    if (size === 0) {
      const trailerEnd = data.indexOf('\r\n', lineEnd + 2);
      return (trailerEnd < 0 ? data.length : trailerEnd + 2) - start;
    }
    if (offset >= data.length) return data.length - start;
  }
}

/** The server name of a TLS ClientHello at the start of `data`, undefined when there is none. */
export function tlsServerName(data: Buffer): string | undefined {
  if (data.length < 5 || data[0] !== 0x16 || data[1] !== 0x03) return undefined;
  // The handshake message may span several records: join their payloads first.
  const parts: Buffer[] = [];
  for (let offset = 0; offset + 5 <= data.length && parts.length < 16; ) {
    if (data[offset] !== 0x16) break;
    const length = data.readUInt16BE(offset + 3);
    parts.push(data.subarray(offset + 5, Math.min(offset + 5 + length, data.length)));
    offset += 5 + length;
  }
  const hello = Buffer.concat(parts);
  if (hello.length < 4 || hello[0] !== 1) return undefined;
  let offset = 4 + 2 + 32;
  const skip = (lengthBytes: number) => {
    if (offset + lengthBytes > hello.length) return false;
    offset += lengthBytes + hello.readUIntBE(offset, lengthBytes);
    return offset <= hello.length;
  };
  if (!skip(1) || !skip(2) || !skip(1) || offset + 2 > hello.length) return undefined;
  const extensionsEnd = Math.min(offset + 2 + hello.readUInt16BE(offset), hello.length);
  offset += 2;
  while (offset + 4 <= extensionsEnd) {
    const type = hello.readUInt16BE(offset);
    const length = hello.readUInt16BE(offset + 2);
    const body = hello.subarray(offset + 4, Math.min(offset + 4 + length, extensionsEnd));
    if (type === 0 && body.length >= 5 && body[2] === 0) {
      const nameLength = body.readUInt16BE(3);
      return body.toString('latin1', 5, Math.min(5 + nameLength, body.length));
    }
    offset += 4 + length;
  }
  return undefined;
}

export function looksLikeSmtp(data: Buffer): boolean {
  return /^(EHLO|HELO|LHLO)\b/i.test(data.toString('latin1', 0, 8));
}

const IRC_COMMANDS = new Set(['PASS', 'NICK', 'USER', 'JOIN', 'PART', 'PRIVMSG', 'NOTICE', 'MODE', 'TOPIC', 'QUIT', 'PING', 'PONG', 'WHO', 'WHOIS', 'LIST', 'NAMES', 'CAP']);

/** IRC commands a client sent, if its stream opens like an IRC session (NICK, USER, PASS or CAP). */
export function ircCommands(data: Buffer): Array<{ command: string; params: string }> {
  const text = data.toString('latin1');
  if (!/^(NICK|USER|PASS|CAP) /i.test(text)) return [];
  const commands: Array<{ command: string; params: string }> = [];
  for (const line of text.split(/\r?\n/)) {
    const match = /^(?::\S+ )?([A-Za-z]+)(?: (.*))?$/.exec(line);
    if (!match || !IRC_COMMANDS.has(match[1]!.toUpperCase())) continue;
    commands.push({ command: match[1]!.toUpperCase(), params: match[2] ?? '' });
    if (commands.length >= MAX_REQUESTS) break;
  }
  return commands;
}

/** Bytes as text the way Cuckoo shows captured data: printable ASCII kept, anything else as \xNN. */
export function printable(data: Uint8Array): string {
  let text = '';
  for (const byte of data) {
    text += (byte >= 0x20 && byte <= 0x7e) || byte === 9 || byte === 10 || byte === 13 || byte === 11 || byte === 12
      ? String.fromCharCode(byte)
      : `\\x${byte.toString(16).padStart(2, '0')}`;
  }
  return text;
}
