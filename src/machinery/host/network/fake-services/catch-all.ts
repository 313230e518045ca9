import type { Server } from 'node:net';
import type net from 'node:net';
import { Duplex } from 'node:stream';
import { sink, type ConnectionHandler } from './service.js';

/**
 * Every TCP port without its own service ends here. The protocol is guessed from the first bytes the
 * sample sends: TLS and HTTP go to the fake web, IRC registration to the IRC server; anything else is
 * accepted and read until the sample hangs up. A protocol where the server speaks first gets silence.
 */
export type Guess = 'tls' | 'http' | 'irc' | 'unknown';

const HTTP_START = /^(GET|POST|HEAD|PUT|DELETE|OPTIONS|PATCH|CONNECT|TRACE|PROPFIND) /;
const HTTP_REQUEST_LINE = /^[A-Z]{3,16} \S+ HTTP\/1\.[01]\r?\n/;
const IRC_START = /^(NICK|USER|PASS|CAP) /i;

export function guessProtocol(first: Buffer): Guess {
  if (first.length >= 2 && first[0] === 0x16 && first[1] === 0x03) return 'tls';
  const text = first.subarray(0, 256).toString('latin1');
  if (HTTP_START.test(text) || HTTP_REQUEST_LINE.test(text)) return 'http';
  if (IRC_START.test(text)) return 'irc';
  return 'unknown';
}

export interface CatchAllTargets {
  http: Server;
  https: Server;
  irc: ConnectionHandler;
}

export function catchAll(targets: CatchAllTargets): ConnectionHandler {
  return (socket: net.Socket) => {
    socket.once('data', (first: Buffer) => {
      socket.pause();
      socket.unshift(first);
      const guess = guessProtocol(first);
      if (guess === 'tls') targets.https.emit('connection', replaying(socket));
      else if (guess === 'http') targets.http.emit('connection', socket);
      else if (guess === 'irc') targets.irc(socket);
      else sink(socket);
      socket.resume();
    });
  };
}

/**
 * TLS reads straight from a socket's handle, past anything unshifted back into the socket, so the TLS
 * server gets a plain stream that yields the socket's data from the first byte.
 */
function replaying(socket: net.Socket): Duplex {
  const stream = new Duplex({
    read: () => void socket.resume(),
    write: (chunk: Buffer, _encoding, done) => void socket.write(chunk, done),
    final: (done) => void socket.end(done),
    destroy: (error, done) => {
      socket.destroy();
      done(error);
    },
  });
  socket.on('data', (chunk: Buffer) => {
    if (!stream.push(chunk)) socket.pause();
  });
  socket.on('end', () => stream.push(null));
  socket.on('close', () => stream.destroy());
  return stream;
}
