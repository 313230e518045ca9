import type { FastifyInstance } from 'fastify';
import type { AppContext } from '../../../app.js';
import { TaskCreation } from '../../../tasks/create.js';
import { errorHandler } from '../../error-handler.js';
import { Registrar } from '../registrar.js';
import { registerFormParsers } from '../../received-forms.js';
import { nodeRoutes } from './nodes.js';
import { resultRoutes } from './results.js';
import { distributedStatusRoutes } from './status.js';
import { distributedTaskRoutes } from './tasks.js';

/**
 * Cuckoo 2.0.7's distributed API (`cuckoo distributed server`, cuckoo-compat §7) under /api and
 * /api/v1, in a scope of its own: its forms, and its errors, which say `success: false` beside the message.
 */
export async function distributedRoutes(app: FastifyInstance, ctx: AppContext): Promise<void> {
  await app.register(async (scope) => {
    await registerFormParsers(scope, ctx);
    scope.setErrorHandler(errorHandler((message) => ({ message, success: false })));
    const r = new Registrar(scope);
    nodeRoutes(r, ctx);
    distributedTaskRoutes(r, ctx, new TaskCreation(ctx));
    resultRoutes(r, ctx);
    distributedStatusRoutes(r, ctx);
  });
}
