import fc from 'fast-check';
import { boundaries, multipartBodies, mutated, mutations } from './multipart.js';

/**
 * Whole HTTP requests for fuzzing, as bytes: malformed create requests (Content-Type, framing, odd
 * headers, spoilt multipart bodies), requests to odd paths with odd methods, and clients that go away
 * mid-body.
 */

export interface FuzzCase {
  /** Shown when the case fails. */
  label: string;
  bytes: Buffer;
  /** How fast-check prints a failing case: the label and the start of the request, not every byte. */
  [fc.toStringMethod]?: () => string;
  /** The client sends this many bytes and resets the connection; no answer is due. */
  dropAfter?: number;
  head?: boolean;
}

export const CREATE_PATHS = ['/tasks/create/file', '/tasks/create/url', '/tasks/create/submit', '/v1/tasks/create/file', '/v1/tasks/create/submit'];

type Framing = 'length' | 'chunked' | 'length-and-chunked' | 'short-length';

const token = fc.stringMatching(/^[!#$%&'*+.^_`|~0-9A-Za-z-]{1,20}$/);
const anyLatin1 = fc.string({ maxLength: 30, unit: 'binary' }).map((value) => Buffer.from(value, 'latin1').toString('latin1'));

/** Header lines besides Host, framing and Content-Type: mostly valid and unusual, some invalid. */
const oddHeader = fc.oneof(
  { weight: 3, arbitrary: token.map((value) => `Expect: ${value}`) },
  {
    weight: 8,
    arbitrary: fc.constantFrom(
      'Expect: 100-continue',
      'X-Requested-With: XMLHttpRequest',
      'Content-Encoding: gzip',
      'Connection: Upgrade\r\nUpgrade: websocket',
      'Authorization: Bearer wrong',
      'Content-Type: text/plain',
      'Host: other.test',
      ' folded: continuation',
      `X-Big: ${'a'.repeat(17_000)}`,
    ),
  },
  { weight: 1, arbitrary: fc.tuple(token, anyLatin1).map(([name, value]) => `${name}: ${value}`) },
  { weight: 1, arbitrary: anyLatin1 },
);
/** Most requests have none, so that most reach the multipart parser. */
const oddHeaders = fc.oneof({ weight: 2, arbitrary: fc.constant([]) }, fc.array(oddHeader, { minLength: 1, maxLength: 3 }));

function contentTypes(boundary: string) {
  return fc.oneof(
    { weight: 6, arbitrary: fc.constant(`multipart/form-data; boundary=${boundary}`) },
    fc.constant('multipart/form-data'),
    fc.constant('multipart/form-data; boundary=never-in-the-body'),
    fc.constant(`multipart/form-data; boundary="${boundary}"`),
    fc.constant('multipart/form-data; boundary='),
    fc.constant(`MULTIPART/FORM-DATA; BOUNDARY=${boundary}`),
    fc.constant(`multipart/form-data; boundary=${boundary}; boundary=other`),
    fc.constant(`multipart/mixed; boundary=${boundary}`),
    fc.constant('multipart/form-data;;;'),
    fc.constant('application/x-www-form-urlencoded'),
    fc.constant('text/plain'),
    fc.constant(undefined),
  );
}

/** A case that prints readably when it fails. */
function fuzzCase(label: string, bytes: Buffer, extra: Pick<FuzzCase, 'dropAfter' | 'head'> = {}): FuzzCase {
  const excerpt = JSON.stringify(bytes.subarray(0, 600).toString('latin1'));
  return { label, bytes, ...extra, [fc.toStringMethod]: () => `${label} (${bytes.length} bytes): ${excerpt}` };
}

/** A request line (paths as UTF-8), headers and body (latin1: byte for byte), framed as asked. */
export function httpRequest(method: string, path: string, headers: readonly string[], body: Buffer | undefined, framing: Framing = 'length'): Buffer {
  const lines = ['Host: 127.0.0.1', ...headers];
  if (body !== undefined && framing !== 'chunked') lines.push(`Content-Length: ${framing === 'short-length' ? Math.floor(body.length / 2) : body.length}`);
  if (body !== undefined && (framing === 'chunked' || framing === 'length-and-chunked')) lines.push('Transfer-Encoding: chunked');
  const head = Buffer.concat([Buffer.from(`${method} ${path} HTTP/1.1\r\n`, 'utf8'), Buffer.from(`${lines.join('\r\n')}\r\n\r\n`, 'latin1')]);
  if (body === undefined) return head;
  return Buffer.concat([head, framing === 'length' || framing === 'short-length' ? body : chunked(body)]);
}

function chunked(body: Buffer): Buffer {
  const pieces: Buffer[] = [];
  for (let at = 0; at < body.length; at += 97) {
    const piece = body.subarray(at, at + 97);
    pieces.push(Buffer.from(`${piece.length.toString(16)}\r\n`), piece, Buffer.from('\r\n'));
  }
  return Buffer.concat([...pieces, Buffer.from('0\r\n\r\n')]);
}

/** POSTs to the create endpoints with a malformed multipart body, Content-Type, framing or headers. */
export const malformedCreateRequests: fc.Arbitrary<FuzzCase> = boundaries.chain((boundary) =>
  fc
    .record({
      path: fc.constantFrom(...CREATE_PATHS),
      contentType: contentTypes(boundary),
      body: multipartBodies(boundary),
      mutation: mutations,
      framing: fc.oneof(
        { weight: 8, arbitrary: fc.constant<Framing>('length') },
        { weight: 3, arbitrary: fc.constant<Framing>('chunked') },
        fc.constantFrom<Framing>('length-and-chunked', 'short-length'),
      ),
      headers: oddHeaders,
    })
    .map(({ path, contentType, body, mutation, framing, headers }) => {
      const typeHeader = contentType === undefined ? [] : [`Content-Type: ${contentType}`];
      const bytes = httpRequest('POST', path, [...typeHeader, ...headers], mutated(body.bytes, mutation), framing);
      return fuzzCase(`POST ${path} (${contentType}; ${framing}; ${mutation.kind}; ${headers.length} odd headers)`, bytes);
    }),
);

/** Well-formed multipart uploads whose client goes away before the closing delimiter. */
export const droppedUploads: fc.Arbitrary<FuzzCase> = fc
  .record({ path: fc.constantFrom(...CREATE_PATHS), boundary: boundaries.filter((b) => b.length <= 70), at: fc.double({ min: 0, max: 1, noNaN: true }) })
  .chain(({ path, boundary, at }) =>
    multipartBodies(boundary).map((body) => {
      const bytes = httpRequest('POST', path, [`Content-Type: multipart/form-data; boundary=${boundary}`], body.bytes);
      const headLength = bytes.length - body.bytes.length;
      return fuzzCase(`POST ${path} dropped`, bytes, { dropAfter: headLength + Math.floor(body.closingAt * at) });
    }),
  );

const ROUTES = ['/tasks/view/{}', '/tasks/list/{}', '/tasks/report/{}/{}', '/tasks/delete/{}', '/tasks/screenshots/{}/{}', '/files/get/{}', '/files/view/md5/{}', '/memory/get/{}/{}', '/pcap/get/{}', '/machines/view/{}', '/tasks/create/{}', '/v1/{}', '/{}', '/cuckoo/status'];
const segments = fc.oneof(
  { weight: 3, arbitrary: fc.stringMatching(/^[0-9]{1,25}$/) },
  { weight: 3, arbitrary: fc.constantFrom('..', '.', '%2e%2e%2f', '%2E%2E', '%zz', '%', '%00', '%ff%fe', '%C0%AF', '%252e', 'a'.repeat(5000), '\u00e9', '\t', ';', '*') },
  { weight: 3, arbitrary: fc.string({ maxLength: 20 }).map((value) => encodeURIComponent(value)) },
  { weight: 1, arbitrary: fc.string({ maxLength: 12, unit: 'binary' }) },
);
const queries = fc.oneof(fc.constant(''), fc.constant('?completed_after=%zz&limit=-1&offset=x'), fc.string({ maxLength: 20 }).map((value) => `?${value}`));
const methods = fc.constantFrom('GET', 'GET', 'GET', 'HEAD', 'POST', 'POST', 'PUT', 'DELETE', 'PATCH', 'OPTIONS', 'TRACE', 'PROPFIND', 'FOO', 'get');

/** Odd methods on odd paths, with odd headers and no body. */
export const oddPathRequests: fc.Arbitrary<FuzzCase> = fc
  .record({ method: methods, route: fc.constantFrom(...ROUTES), parts: fc.array(segments, { minLength: 2, maxLength: 2 }), query: queries, headers: oddHeaders })
  .map(({ method, route, parts, query, headers }) => {
    const path = route.replace('{}', parts[0]!).replace('{}', parts[1]!) + query;
    const bytes = httpRequest(method, path, headers, undefined);
    return fuzzCase(`${method} ${JSON.stringify(path).slice(0, 200)}`, bytes, { head: method === 'HEAD' });
  });
