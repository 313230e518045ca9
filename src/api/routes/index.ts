import type { FastifyInstance } from 'fastify';
import type { AppContext } from '../../app.js';
import { Registrar } from './registrar.js';
import { artifactRoutes } from './artifacts.js';
import { clusterTransferRoutes } from './cluster-transfer.js';
import { distributedRoutes } from './distributed/index.js';
import { machineRoutes } from './machines.js';
import { reportRoutes } from './reports.js';
import { serviceRoutes, type ServiceRouteOptions } from './service.js';
import { statusRoutes } from './status.js';
import { taskRoutes } from './tasks.js';
import { taskCreationRoutes } from './tasks-create.js';

/** Every route module of the API, registered in one place. */
export async function registerRoutes(app: FastifyInstance, ctx: AppContext, options: ServiceRouteOptions): Promise<void> {
  const r = new Registrar(app);
  statusRoutes(r, ctx);
  taskRoutes(r, ctx);
  reportRoutes(r, ctx);
  artifactRoutes(r, ctx);
  machineRoutes(r, ctx);
  serviceRoutes(r, ctx, options);
  await taskCreationRoutes(app, ctx);
  await clusterTransferRoutes(app, ctx);
  await distributedRoutes(app, ctx);
}
