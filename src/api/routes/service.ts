import { readFile } from 'node:fs/promises';
import type { AppContext } from '../../app.js';
import { forbidden, unavailable } from '../../errors.js';
import type { Registrar } from './registrar.js';

/** GET /vpn/status and GET /exit (cuckoo-compat §4.21, §4.22); neither has a /v1 alias. */
/** What the service routes need from whoever runs the server. */
export interface ServiceRouteOptions {
  /** Called by GET /exit in debug mode, after the answer is sent. */
  onExit?: () => void;
}

export function serviceRoutes(r: Registrar, ctx: AppContext, options: ServiceRouteOptions): void {
  r.get('/vpn/status', async () => {
    const vpns = ctx.config.routing.vpns;
    if (vpns.length === 0) throw unavailable('No VPN is configured');
    const states = await Promise.all(vpns.map(async (vpn) => [vpn.name, await interfaceIsUp(vpn.interface)] as const));
    return { vpns: Object.fromEntries(states) };
  });

  // Only GET stops the service: a HEAD request answers the same status without side effect.
  r.get('/exit', async (request, reply) => {
    if (!ctx.config.api.debug) throw forbidden('This call can only be used in debug mode');
    const onExit = options.onExit;
    if (!onExit) throw unavailable('This server cannot be stopped through the API');
    if (request.method === 'GET') reply.raw.once('finish', () => onExit());
    return { message: 'Server stopped' };
  });
}

const IFF_UP = 0x1;

/**
 * Whether a network interface exists and is up. Tunnel devices (OpenVPN's tun) report operstate
 * "unknown" while working, so for them the administrative IFF_UP flag decides.
 */
async function interfaceIsUp(name: string): Promise<boolean> {
  if (name === '' || name === '.' || name === '..' || name.includes('/') || name.length > 15) return false;
  const read = (file: string) => readFile(`/sys/class/net/${name}/${file}`, 'utf8').then((text) => text.trim(), () => undefined);
  const operstate = await read('operstate');
  if (operstate === 'up') return true;
  if (operstate !== 'unknown') return false;
  const flags = Number.parseInt((await read('flags')) ?? '0', 16);
  return (flags & IFF_UP) !== 0;
}
