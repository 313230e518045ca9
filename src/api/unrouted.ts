import { type IncomingHttpHeaders, type IncomingMessage, type Server, type ServerResponse, STATUS_CODES } from 'node:http';
import type { Duplex } from 'node:stream';
import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify';
import { invalidInput, NestboxError } from '../errors.js';
import { AUTH_REQUIRED_MESSAGE } from './auth.js';
import { type ErrorAnswer, errorAnswer } from './error-handler.js';
import { SECURITY_HEADERS } from './headers.js';
import { cuckooJson } from './json.js';

/**
 * Requests that no route sees. Node itself answers CONNECT (by dropping the connection), an `Expect`
 * other than 100-continue (an empty 417) and requests it cannot parse (Fastify's JSON, not ours), and
 * Fastify answers URLs it cannot decode in its own format. Here each gets what every other error gets:
 * a JSON {"message": ...} from error-handler.ts with the API's headers, after the token check.
 */

type AuthorizationCheck = (headers: IncomingHttpHeaders) => boolean;

/** Allow list for CONNECT, which names no path: every method some route of the API answers. */
const ANY_ROUTE_ALLOWS = 'GET, HEAD, POST, OPTIONS';
/** How long a refused connection may stay open for a client that never closes its side. */
const LINGER_MS = 1000;

export function answerUnroutedRequests(server: Server, authorized: AuthorizationCheck): void {
  server.on('connect', (request: IncomingMessage, socket: Duplex) => {
    // Node has taken its own listeners off the socket: without this, a reset would crash the service.
    socket.on('error', () => undefined);
    const refusal = new NestboxError('method_not_allowed', 'CONNECT is not supported: nestbox is not a proxy');
    writeToSocket(socket, errorAnswer(checked(request.headers, authorized, refusal)), request.headers, { allow: ANY_ROUTE_ALLOWS });
  });
  server.on('checkExpectation', (request: IncomingMessage, response: ServerResponse) => {
    const expectation = String(request.headers.expect);
    const refusal = new NestboxError('expectation_failed', `Expect: ${expectation} is not supported; only Expect: 100-continue is`);
    const answer = errorAnswer(checked(request.headers, authorized, refusal));
    // The body the client holds back would otherwise be read as its next request.
    const { body, headers } = rendered(answer, request.headers, { connection: 'close' });
    response.writeHead(answer.status, headers).end(body);
  });
}

/** Fastify's clientErrorHandler: the request could not be parsed, so its headers are unknown. */
export function answerClientError(error: NodeJS.ErrnoException & { reason?: unknown }, socket: Duplex): void {
  if (error.code === 'ECONNRESET' || socket.destroyed || !socket.writable) return;
  const answer = errorAnswer(clientErrorOf(error));
  // A pipelined request that cannot be parsed must not be answered before the request ahead of it, or
  // the client takes the 400 for that one. Node keeps the answer in progress as the socket's
  // `_httpMessage` (its own default clientError handler looks at it too). While that request's body is
  // still incomplete, the error is about that request itself (a connection ended mid-body).
  const ahead = (socket as { _httpMessage?: ServerResponse | null })._httpMessage;
  if (!ahead || ahead.writableFinished || !ahead.req.complete) return writeToSocket(socket, answer);
  ahead.once('close', () => {
    if (socket.writable) writeToSocket(socket, answer);
  });
}

/** Fastify's frameworkErrors: URLs it cannot decode, before any hook of ours has run. */
export function frameworkErrorAnswerer(authorized: AuthorizationCheck) {
  return (error: FastifyError, request: FastifyRequest, reply: FastifyReply): void => {
    const { status, message } = errorAnswer(checked(request.headers, authorized, error));
    const compact = wantsCompactJson(request.headers);
    // Fastify would add a charset to a string body; through a serializer it keeps the type as given.
    void reply.code(status).headers(SECURITY_HEADERS).type('application/json').serializer((payload) => cuckooJson(payload, compact)).send({ message });
  };
}

function clientErrorOf(error: NodeJS.ErrnoException & { reason?: unknown }): NestboxError {
  if (error.code === 'HPE_HEADER_OVERFLOW') return new NestboxError('headers_too_large', 'The request headers are larger than the server accepts');
  if (error.code === 'ERR_HTTP_REQUEST_TIMEOUT') return new NestboxError('timed_out', 'The request did not arrive in time');
  // llhttp's reasons are fixed phrases ("Invalid header value char"); they never quote the request.
  const reason = typeof error.reason === 'string' ? error.reason : error.code;
  return invalidInput(`The request is not valid HTTP${reason ? `: ${reason}` : ''}`);
}

/** With a token configured, a request without it learns nothing but that (auth.ts). */
function checked(headers: IncomingHttpHeaders, authorized: AuthorizationCheck, refusal: unknown): unknown {
  return authorized(headers) ? refusal : new NestboxError('unauthorized', AUTH_REQUIRED_MESSAGE);
}

/** As on every route: compact JSON for XMLHttpRequest clients. */
function wantsCompactJson(headers: IncomingHttpHeaders): boolean {
  return headers['x-requested-with'] === 'XMLHttpRequest';
}

function rendered(answer: ErrorAnswer, requestHeaders: IncomingHttpHeaders = {}, extra: Record<string, string> = {}) {
  const body = cuckooJson({ message: answer.message }, wantsCompactJson(requestHeaders));
  const headers = { ...SECURITY_HEADERS, 'content-type': 'application/json', 'content-length': String(Buffer.byteLength(body)), ...extra };
  return { body, headers };
}

/** A whole HTTP answer on a connection Node no longer manages, which then closes. */
function writeToSocket(socket: Duplex, answer: ErrorAnswer, requestHeaders: IncomingHttpHeaders = {}, extra: Record<string, string> = {}): void {
  const { body, headers } = rendered(answer, requestHeaders, { connection: 'close', ...extra });
  const head = [`HTTP/1.1 ${answer.status} ${STATUS_CODES[answer.status]}`, ...Object.entries(headers).map(([name, value]) => `${name}: ${value}`)];
  socket.end(`${head.join('\r\n')}\r\n\r\n${body}`);
  // A client that never closes its side would keep the connection, and the server's close(), waiting.
  socket.once('finish', () => setTimeout(() => socket.destroy(), LINGER_MS).unref());
}
