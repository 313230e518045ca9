import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { NestboxError } from '../../errors.js';

export type Handler = (request: FastifyRequest, reply: FastifyReply) => Promise<unknown>;

export interface RouteOptions {
  /** Also answer under /v1, as Cuckoo 2.0.7 does for most routes (see cuckoo-compat §1.5). */
  v1?: boolean;
}

const METHODS = ['GET', 'HEAD', 'POST', 'PUT', 'DELETE', 'PATCH'] as const;

/** The methods a path answers, each with its handler (GET also answers HEAD). */
export type MethodHandlers = Partial<Record<'GET' | 'POST' | 'PUT' | 'DELETE', Handler>>;

/**
 * Registers a route under its path and its aliases. Like Flask's, GET routes also answer HEAD, every
 * route answers OPTIONS with its `Allow` list, and other methods get 405 with that list.
 */
export class Registrar {
  constructor(private readonly app: FastifyInstance) {}

  get(paths: string | string[], handler: Handler, options: RouteOptions = {}): void {
    this.routes(paths, { GET: handler }, options);
  }

  post(paths: string | string[], handler: Handler, options: RouteOptions = {}): void {
    this.routes(paths, { POST: handler }, options);
  }

  /** Several methods on the same paths (Cuckoo's distributed API has GET, PUT and DELETE on /node/<name>). */
  routes(paths: string | string[], handlers: MethodHandlers, options: RouteOptions = {}): void {
    const methods = Object.keys(handlers) as Array<keyof MethodHandlers>;
    const allowed = methods.flatMap((method) => (method === 'GET' ? ['GET', 'HEAD'] : [method]));
    const allow = [...allowed, 'OPTIONS'].join(', ');
    const others = METHODS.filter((candidate) => !allowed.includes(candidate));
    for (const path of Array.isArray(paths) ? paths : [paths]) {
      for (const prefix of options.v1 ? ['', '/v1'] : ['']) {
        const url = prefix + path;
        for (const method of methods) this.app.route({ method, url, handler: handlers[method]! });
        this.app.route({ method: 'OPTIONS', url, handler: async (_request, reply) => reply.header('allow', allow).type('text/html; charset=utf-8').code(200).send() });
        this.app.route({
          method: others,
          url,
          handler: async (request, reply) => {
            reply.header('allow', allow);
            throw new NestboxError('method_not_allowed', `${request.method} is not allowed here; use ${methods.join(' or ')}`);
          },
        });
      }
    }
  }
}
