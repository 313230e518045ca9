import type { FastifyInstance } from 'fastify';
import type { AppContext } from '../../app.js';
import type { ServerOptions } from '../server.js';
import { Registrar } from './registrar.js';
import { statusRoutes } from './status.js';

/** Every route module of the API, registered in one place. */
export async function registerRoutes(app: FastifyInstance, ctx: AppContext, _options: ServerOptions): Promise<void> {
  const r = new Registrar(app);
  statusRoutes(r, ctx);
}
