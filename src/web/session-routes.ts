import type { FastifyInstance, FastifyRequest } from 'fastify';
import { z } from 'zod';
import { NestboxError } from '../errors.js';
import { clearedSessionCookie, cookieValue, SESSION_COOKIE, sessionCookie } from '../api/sessions.js';
import { validated } from './validation.js';

const signIn = z.strictObject({ token: z.string().max(4096) });

/**
 * GET /ui/api/session (whether sign-in is needed, and the CSRF value of this page), POST (sign in with
 * the API token: a session cookie) and DELETE (sign out). The access control itself is api/auth.ts.
 */
export async function sessionRoutes(app: FastifyInstance): Promise<void> {
  const control = app.accessControl;

  app.get('/ui/api/session', async (request) => ({
    authRequired: control.required,
    authenticated: request.access !== undefined,
    csrf: control.csrfOf(request.access),
  }));

  app.post('/ui/api/session', async (request, reply) => {
    const { token } = validated(signIn, request.body, 'request body');
    if (!control.required) return { authenticated: true, csrf: control.openCsrf };
    if (!control.tokenMatches(token)) throw new NestboxError('unauthorized', 'The token is not the API token');
    const { id, session } = control.sessions.create();
    reply.header('set-cookie', sessionCookie(id, session.expiresAt, overTls(request)));
    return { authenticated: true, csrf: session.csrf };
  });

  app.delete('/ui/api/session', async (request, reply) => {
    control.sessions.delete(cookieValue(request.headers.cookie, SESSION_COOKIE));
    reply.header('set-cookie', clearedSessionCookie(overTls(request)));
    return { authenticated: !control.required };
  });
}

function overTls(request: FastifyRequest): boolean {
  return request.protocol === 'https';
}
