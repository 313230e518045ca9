import { connect, createServer, type Socket } from 'node:net';

/**
 * Run inside a task's machine namespace (`ip netns exec`): listens where the Windows guest's analyzer
 * sends its results (the result link's host address) and hands each connection, as it is, to the task's
 * result server on a Unix socket on the host, which a namespace does not separate. Settings come as one
 * JSON argument; "ready" on stdout once listening; it ends when its stdin closes.
 */
interface ForwarderSettings {
  host: string;
  port: number;
  socket: string;
}

const settings = JSON.parse(process.argv[2] ?? '{}') as ForwarderSettings;

/** Each side's end is passed on (a sender's end is how Cuckoo's protocol ends an upload); an error ends both. */
function forward(guest: Socket): void {
  const host = connect(settings.socket);
  const close = () => {
    guest.destroy();
    host.destroy();
  };
  guest.on('error', close);
  host.on('error', close).on('close', () => guest.destroy());
  guest.pipe(host);
  host.pipe(guest);
}

const server = createServer({ allowHalfOpen: true }, forward);
server.listen(settings.port, settings.host, () => process.stdout.write('ready\n'));
process.stdin.on('end', () => process.exit(0)).resume();
