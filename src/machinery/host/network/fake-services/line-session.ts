import type net from 'node:net';

/** The text protocols (SMTP, IRC, FTP) are line by line; a line longer than this ends the conversation. */
const MAX_LINE = 16 * 1024;

export interface LineSession {
  /** Sends one line, adding CRLF. */
  send(line: string): void;
  /** Sends a last line and closes the connection. */
  end(line?: string): void;
}

/** Calls onLine for each line the peer sends (without its line ending), in order. */
export function lineSession(socket: net.Socket, onLine: (line: string, session: LineSession) => void): LineSession {
  const session: LineSession = {
    send: (line) => {
      if (socket.writable) socket.write(`${line}\r\n`);
    },
    end: (line) => {
      if (line !== undefined) session.send(line);
      socket.end();
    },
  };
  let pending = '';
  socket.setEncoding('latin1');
  socket.on('data', (chunk: string) => {
    pending += chunk;
    let newline: number;
    while ((newline = pending.indexOf('\n')) >= 0 && !socket.destroyed) {
      const line = pending.slice(0, newline).replace(/\r$/, '');
      pending = pending.slice(newline + 1);
      onLine(line, session);
    }
    if (pending.length > MAX_LINE) session.end();
  });
  socket.on('end', () => socket.end());
  return session;
}
