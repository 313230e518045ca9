import http from 'node:http';
import https from 'node:https';
import type { Duplex } from 'node:stream';
import { payloadFor } from './downloads.js';

/**
 * The fake web: every method on every path of every host gets 200 and a payload chosen from the path.
 * Requests the HTTP parser refuses (unknown methods, odd framing) still get a 200, written by hand,
 * because a real server somewhere would have answered something.
 */
const SERVER_HEADER = 'nginx';

function respond(request: http.IncomingMessage, response: http.ServerResponse): void {
  request.resume();
  const payload = payloadFor(request.url ?? '/');
  response.writeHead(200, {
    Server: SERVER_HEADER,
    'Content-Type': payload.contentType,
    'Content-Length': payload.body.length,
  });
  response.end(request.method === 'HEAD' ? undefined : payload.body);
}

function answerUnparsable(socket: Duplex): void {
  if (!socket.writable) return void socket.destroy();
  const payload = payloadFor('/');
  socket.end(
    `HTTP/1.1 200 OK\r\nServer: ${SERVER_HEADER}\r\nContent-Type: ${payload.contentType}\r\n` +
      `Content-Length: ${payload.body.length}\r\nConnection: close\r\n\r\n${payload.body.toString('latin1')}`,
  );
}

function harden(server: http.Server): void {
  server.on('clientError', (_error, socket) => answerUnparsable(socket));
  server.keepAliveTimeout = 30_000;
  server.headersTimeout = 60_000;
  server.requestTimeout = 120_000;
}

/** A plain HTTP server; its connections come from the listening sockets of the fake-services process. */
export function createHttpServer(): http.Server {
  const server = http.createServer({ insecureHTTPParser: true }, respond);
  harden(server);
  return server;
}

/** The same answers over TLS, with one certificate for every name (clients that check it will refuse). */
export function createHttpsServer(tls: { key: string; cert: string }): https.Server {
  const server = https.createServer({ key: tls.key, cert: tls.cert, insecureHTTPParser: true }, respond);
  harden(server);
  server.on('tlsClientError', () => undefined);
  return server;
}
