import type http from 'node:http';
import type net from 'node:net';
import tls from 'node:tls';
import { catchAll } from './catch-all.js';
import { serveDnsTcp, startDnsUdp } from './dns.js';
import { serveFtp } from './ftp.js';
import { createHttpServer, createHttpsServer } from './http.js';
import { serveIrc } from './irc.js';
import { CATCH_ALL_PORT, DNS_PORT, SERVICE_PORTS } from './ports.js';
import { listenTcp, prepareSocket, type ConnectionHandler, type ServiceHandle } from './service.js';
import { serveSmtp } from './smtp.js';

/**
 * The fake internet's process. It runs inside a task's gateway namespace (started by fake-internet.ts
 * with `ip netns exec`), reads its settings as one JSON line on stdin, binds every service on the
 * gateway address, then gives up root and says `ready`. It exits when stdin closes, so it never
 * outlives the nestbox process that started it.
 */
export interface FakeServicesSettings {
  host: string;
  tls: { key: string; cert: string };
  /** Identity kept after binding: the services parse whatever the sample sends, so they do it unprivileged. */
  uid: number;
  gid: number;
}

async function main(): Promise<void> {
  const settings = JSON.parse(await readFirstLine()) as FakeServicesSettings;
  const services = await startServices(settings);
  dropPrivileges(settings);
  process.stdin.on('end', () => shutDown(services)).resume();
  process.on('SIGTERM', () => shutDown(services));
  process.stdout.write(`ready ${services.map((service) => `${service.name}:${service.port}`).join(' ')}\n`);
}

function dropPrivileges({ uid, gid }: FakeServicesSettings): void {
  if (!process.setgroups || !process.setgid || !process.setuid) throw new Error('cannot change user on this platform');
  process.setgroups([]);
  process.setgid(gid);
  process.setuid(uid);
}

async function startServices(settings: FakeServicesSettings): Promise<ServiceHandle[]> {
  const web = createHttpServer();
  const secureWeb = createHttpsServer(settings.tls);
  const secure = (handler: ConnectionHandler) => {
    const server = tls.createServer({ key: settings.tls.key, cert: settings.tls.cert }, (socket) => {
      prepareSocket(socket);
      handler(socket);
    });
    server.on('tlsClientError', () => undefined);
    return (socket: net.Socket) => server.emit('connection', socket);
  };
  const handoff = (server: http.Server) => (socket: net.Socket) => server.emit('connection', socket);
  const handlers: Record<keyof typeof SERVICE_PORTS, ConnectionHandler> = {
    ftp: serveFtp,
    smtp: serveSmtp,
    http: handoff(web),
    https: handoff(secureWeb),
    smtps: secure(serveSmtp),
    irc: serveIrc,
    ircs: secure(serveIrc),
  };
  const pending: Promise<ServiceHandle>[] = [
    startDnsUdp(settings.host, DNS_PORT),
    listenTcp('dns/tcp', settings.host, DNS_PORT, serveDnsTcp),
    listenTcp('catch-all', settings.host, CATCH_ALL_PORT, catchAll({ http: web, https: secureWeb, irc: serveIrc })),
  ];
  for (const [name, ports] of Object.entries(SERVICE_PORTS) as [keyof typeof SERVICE_PORTS, readonly number[]][]) {
    for (const port of ports) pending.push(listenTcp(name, settings.host, port, handlers[name]));
  }
  return Promise.all(pending);
}

function readFirstLine(): Promise<string> {
  return new Promise((resolve, reject) => {
    let text = '';
    const onData = (chunk: Buffer) => {
      text += chunk.toString('utf8');
      const newline = text.indexOf('\n');
      if (newline < 0) return;
      process.stdin.off('data', onData).pause();
      resolve(text.slice(0, newline));
    };
    process.stdin.on('data', onData);
    process.stdin.once('end', () => reject(new Error('stdin closed before the settings arrived')));
  });
}

function shutDown(services: ServiceHandle[]): void {
  for (const service of services) service.close();
  process.exit(0);
}

main().catch((error: unknown) => {
  process.stderr.write(`fake services failed: ${error instanceof Error ? error.message : String(error)}\n`);
  process.exit(1);
});
