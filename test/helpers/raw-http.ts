import net from 'node:net';

/** One answer read off a raw connection; status 0 when the connection closed without one. */
export interface RawAnswer {
  status: number;
  headers: Record<string, string>;
  body: string;
}

export interface RawOptions {
  /** Gives up (status 0) when no whole answer has come by then. */
  timeoutMs?: number;
  /** Sends only this many bytes, then resets the connection: a client that goes away mid-request. */
  dropAfter?: number;
  /** The answer to HEAD has no body, whatever its Content-Length says. */
  head?: boolean;
}

/**
 * Sends bytes exactly as given over a fresh loopback connection and reads the one answer. fetch and
 * node:http would fix what these tests send on purpose: framing, methods, header syntax.
 */
export function sendRaw(port: number, bytes: Uint8Array | string, options: RawOptions = {}): Promise<RawAnswer> {
  const data = typeof bytes === 'string' ? Buffer.from(bytes, 'latin1') : Buffer.from(bytes);
  return new Promise((resolve) => {
    const socket = net.connect(port, '127.0.0.1');
    const chunks: Buffer[] = [];
    const finish = () => {
      socket.destroy();
      resolve(parseAnswer(Buffer.concat(chunks), options.head) ?? { status: 0, headers: {}, body: '' });
    };
    socket.on('data', (chunk: Buffer) => {
      chunks.push(chunk);
      if (parseAnswer(Buffer.concat(chunks), options.head)) finish();
    });
    socket.on('close', finish);
    socket.on('error', () => undefined);
    socket.setTimeout(options.timeoutMs ?? 5000, finish);
    // Kept open after writing: Node's server drops the answers of a client that half-closes.
    if (options.dropAfter === undefined) socket.write(data);
    else socket.write(data.subarray(0, options.dropAfter), () => socket.resetAndDestroy());
  });
}

/** A whole answer from the bytes so far, or undefined; a chunked body is kept as it came. */
function parseAnswer(received: Buffer, head = false): RawAnswer | undefined {
  // An interim `100 Continue` comes before the answer to a request that expects it.
  while (received.subarray(0, 10).toString('latin1') === 'HTTP/1.1 1') {
    const interimEnd = received.indexOf('\r\n\r\n');
    if (interimEnd < 0) return undefined;
    received = received.subarray(interimEnd + 4);
  }
  const end = received.indexOf('\r\n\r\n');
  if (end < 0) return undefined;
  const [statusLine, ...lines] = received.subarray(0, end).toString('latin1').split('\r\n');
  const headers: Record<string, string> = {};
  for (const line of lines) {
    const colon = line.indexOf(':');
    headers[line.slice(0, colon).trim().toLowerCase()] = line.slice(colon + 1).trim();
  }
  const status = Number(statusLine!.split(' ')[1]);
  const body = received.subarray(end + 4);
  if (head) return { status, headers, body: '' };
  if (headers['transfer-encoding'] === 'chunked') {
    return body.subarray(-5).toString('latin1') === '0\r\n\r\n' ? { status, headers, body: body.toString('utf8') } : undefined;
  }
  const length = Number(headers['content-length'] ?? NaN);
  if (!Number.isSafeInteger(length) || body.length < length) return undefined;
  return { status, headers, body: body.subarray(0, length).toString('utf8') };
}
