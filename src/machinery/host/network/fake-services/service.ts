import net from 'node:net';

/** A listening fake service, as the fake-services process keeps it. */
export interface ServiceHandle {
  name: string;
  port: number;
  close(): void;
}

export type ConnectionHandler = (socket: net.Socket) => void;

/** A sample may hold a connection open for the whole analysis, but not forever. */
export const IDLE_TIMEOUT_MS = 10 * 60 * 1000;

/** Serves every TCP connection on host:port with handler; errors of one connection never stop the service. */
export function listenTcp(name: string, host: string, port: number, handler: ConnectionHandler): Promise<ServiceHandle> {
  const server = net.createServer((socket) => {
    prepareSocket(socket);
    handler(socket);
  });
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen({ host, port, backlog: 511 }, () => {
      server.off('error', reject);
      server.on('error', () => undefined);
      resolve({ name, port, close: () => server.close() });
    });
  });
}

export function prepareSocket(socket: net.Socket): void {
  socket.on('error', () => socket.destroy());
  socket.setTimeout(IDLE_TIMEOUT_MS, () => socket.destroy());
}

/** Reads and forgets everything the peer sends, so its writes never block. */
export function sink(socket: net.Socket): void {
  socket.on('data', () => undefined);
  socket.on('end', () => socket.end());
}
