import { createHash, timingSafeEqual } from 'node:crypto';
import type { IncomingHttpHeaders } from 'node:http';
import type { FastifyInstance, FastifyRequest, onRequestHookHandler } from 'fastify';
import { CLUSTER_PREFIX } from '../cluster/transfer/protocol.js';
import { forbidden, NestboxError } from '../errors.js';
import { cookieValue, randomToken, SESSION_COOKIE, type Session, SessionStore } from './sessions.js';

export const AUTH_REQUIRED_MESSAGE =
  "Authentication in the form of an 'Authorization: Bearer <TOKEN>' header is required";
export const CSRF_HEADER = 'x-nestbox-csrf';
export const CSRF_REQUIRED_MESSAGE = 'This request needs the X-Nestbox-CSRF header given by GET /ui/api/session';

/** How a request is let in: no token configured, the Bearer token, or a web interface session. */
export type Access = { kind: 'open' } | { kind: 'bearer' } | { kind: 'session'; id: string; session: Session };

declare module 'fastify' {
  interface FastifyRequest {
    access?: Access;
  }
  interface FastifyInstance {
    accessControl: AccessControl;
  }
}

/**
 * Who may use the API. With a token configured, every request (any path, any method) must carry exactly
 * `Authorization: Bearer <token>`, as Cuckoo 2.0.7 requires, or the cookie of a session the web
 * interface signed in with that token. Digests make the comparisons constant-time whatever the lengths.
 *
 * A cookie is sent by the browser on its own, so a request it authenticates that changes something (any
 * method but GET, HEAD and OPTIONS) must also carry the session's CSRF value, which only the interface's
 * own pages can read. Without a token the web interface's own endpoints ask for a per-process value the
 * same way; the Cuckoo routes stay as open as they are in Cuckoo.
 */
export class AccessControl {
  readonly sessions = new SessionStore();
  /** The CSRF value of every page when no token is configured. */
  readonly openCsrf = randomToken();
  private readonly expectedBearer: Buffer | undefined;

  constructor(token: string) {
    this.expectedBearer = token === '' ? undefined : digest(`Bearer ${token}`);
  }

  get required(): boolean {
    return this.expectedBearer !== undefined;
  }

  /** Whether `token` is the configured API token. */
  tokenMatches(token: string): boolean {
    return this.bearerMatches(`Bearer ${token}`);
  }

  /** How the request is let in, or undefined when it is not. */
  identify(headers: IncomingHttpHeaders): Access | undefined {
    if (this.expectedBearer === undefined) return OPEN;
    if (this.bearerMatches(headers.authorization)) return BEARER;
    const id = cookieValue(headers.cookie, SESSION_COOKIE);
    const session = this.sessions.find(id);
    return session === undefined ? undefined : { kind: 'session', id: id!, session };
  }

  /** For answers given outside the routes (response-cache.ts, unrouted.ts). */
  readonly authorized = (headers: IncomingHttpHeaders): boolean => this.identify(headers) !== undefined;

  /** The CSRF value pages of this access send; null for Bearer clients, which need none. */
  csrfOf(access: Access | undefined): string | null {
    if (access?.kind === 'session') return access.session.csrf;
    if (access?.kind === 'open') return this.openCsrf;
    return null;
  }

  private bearerMatches(header: string | undefined): boolean {
    return this.expectedBearer !== undefined && typeof header === 'string' && timingSafeEqual(digest(header), this.expectedBearer);
  }
}

const OPEN: Access = { kind: 'open' };
const BEARER: Access = { kind: 'bearer' };
const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);

export function registerAuth(app: FastifyInstance, control: AccessControl): void {
  app.decorate('accessControl', control);
  // Callback style: it runs on every request.
  app.addHook('onRequest', (request, reply, done) => {
    // Nodes of a cluster authenticate with their own credential only (requireNodeCredential), never a session.
    if (isNodeRoute(request)) return done();
    const access = control.identify(request.headers);
    if (access === undefined) {
      if (isPublicRoute(request)) return done();
      return void reply.code(401).send({ message: AUTH_REQUIRED_MESSAGE });
    }
    request.access = access;
    if (needsCsrf(request, access) && !csrfMatches(request.headers[CSRF_HEADER], control.csrfOf(access))) {
      return void reply.code(403).send({ message: CSRF_REQUIRED_MESSAGE });
    }
    done();
  });
}

function needsCsrf(request: FastifyRequest, access: Access): boolean {
  if (SAFE_METHODS.has(request.method)) return false;
  if (access.kind === 'session') return true;
  return access.kind === 'open' && isWebApiRoute(request);
}

function csrfMatches(header: string | string[] | undefined, expected: string | null): boolean {
  return expected !== null && typeof header === 'string' && timingSafeEqual(digest(header), digest(expected));
}

/**
 * What a browser that is not signed in may reach: the web interface's page and bundled assets (GET /,
 * /ui, /ui/... but not /ui/api/...: they hold no data), and the sign-in endpoint. Decided by the route
 * that matched and by the path as sent, so no encoding of a path can pass for another.
 */
function isPublicRoute(request: FastifyRequest): boolean {
  const route = request.routeOptions.url;
  if (route === '/ui/api/session') return true;
  if (route === undefined || (request.method !== 'GET' && request.method !== 'HEAD')) return false;
  if (route === '/' || route === '/ui') return true;
  return route.startsWith('/ui/') && !isWebApiRoute(request) && !request.url.startsWith('/ui/api/');
}

/** The routes other nodes of a cluster call (api/routes/cluster-transfer.ts), by the route that matched. */
function isNodeRoute(request: FastifyRequest): boolean {
  return request.routeOptions.url?.startsWith(`${CLUSTER_PREFIX}/`) ?? false;
}

export const NODE_AUTH_MESSAGE = "The cluster's routes need the node credential in an 'Authorization: Bearer <TOKEN>' header";

/**
 * The hook of the routes under /cluster/v1: only `Authorization: Bearer <credential>` lets a request in
 * (cluster.node_token, else api.token); no header is 401, a wrong one 403. Without any credential
 * configured the routes are closed, since they write results.
 */
export function requireNodeCredential(credential: string): onRequestHookHandler {
  const expected = credential === '' ? undefined : digest(`Bearer ${credential}`);
  return (request, _reply, done) => {
    const header = request.headers.authorization;
    if (expected === undefined) return done(forbidden('No node credential is configured (cluster.node_token or api.token), so the cluster routes are closed'));
    if (typeof header !== 'string' || !/^Bearer /.test(header)) return done(new NestboxError('unauthorized', NODE_AUTH_MESSAGE));
    if (!timingSafeEqual(digest(header), expected)) return done(forbidden('The node credential is not valid'));
    done();
  };
}

function isWebApiRoute(request: FastifyRequest): boolean {
  return request.routeOptions.url?.startsWith('/ui/api/') ?? false;
}

function digest(text: string): Buffer {
  return createHash('sha256').update(text).digest();
}
