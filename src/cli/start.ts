import { createContext } from '../app.js';
import { defaultHome, loadConfig } from '../config/load.js';
import type { Config } from '../config/schema.js';
import { invalidInput } from '../errors.js';
import { createService } from '../service.js';

export interface StartOptions {
  home?: string;
  host?: string;
  port?: string;
  debug?: boolean;
  /** commander's negation of --no-engine. */
  engine?: boolean;
  /** The node's role in a cluster; overrides cluster.role. */
  role?: string;
}

export async function startCommand(options: StartOptions): Promise<void> {
  const home = options.home ?? defaultHome();
  const { config, file, createdToken } = loadConfig(home);
  if (options.host) config.api.host = options.host;
  if (options.port) config.api.port = parsePort(options.port);
  if (options.debug) config.api.debug = true;
  if (options.role) config.cluster.role = parseRole(options.role);
  if (createdToken) {
    process.stdout.write(`Created ${file}\nAPI token (shown once; clients send "Authorization: Bearer <token>"):\n  ${createdToken}\n`);
  }
  const ctx = await createContext({ config, home });
  let stopping: Promise<void> | undefined;
  const stop = () => {
    stopping ??= service.close().then(() => ctx.close());
    return stopping;
  };
  const service = await createService(ctx, { engine: options.engine !== false, onExit: () => void stop() });
  if (config.api.token === '') ctx.log.warn('api.token is empty: the API accepts requests without authentication');
  const address = await service.app.listen({ host: config.api.host, port: config.api.port });
  await service.node.setUrl(address);
  process.stdout.write(`nestbox listening on ${address}\n`);
  for (const signal of ['SIGINT', 'SIGTERM'] as const) process.once(signal, () => void stop());
}

function parsePort(text: string): number {
  const port = Number(text);
  if (!Number.isInteger(port) || port < 0 || port > 65535) throw invalidInput(`invalid port ${JSON.stringify(text)}`);
  return port;
}

function parseRole(text: string): Config['cluster']['role'] {
  const roles = ['all', 'main', 'worker'] as const;
  const role = roles.find((candidate) => candidate === text);
  if (!role) throw invalidInput(`invalid role ${JSON.stringify(text)}: all, main or worker`);
  return role;
}
