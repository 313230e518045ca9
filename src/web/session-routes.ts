import type { FastifyInstance } from 'fastify';
import type { AppContext } from '../app.js';

/**
 * What the interface needs to know before it shows anything: whether it must ask for the token.
 * (Placeholder of the scaffold: sign-in, sessions and CSRF tokens replace it.)
 */
export function sessionRoutes(app: FastifyInstance, ctx: AppContext): void {
  app.get('/ui/api/session', () => {
    const authRequired = ctx.config.api.token !== '';
    return { authRequired, authenticated: !authRequired, csrf: null };
  });
}
