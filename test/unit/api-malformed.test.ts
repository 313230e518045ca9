import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { storeCounts } from '../helpers/fuzz/invariants.js';
import { CREATE_PATHS, httpRequest } from '../helpers/fuzz/requests.js';
import { type RawAnswer, sendRaw } from '../helpers/raw-http.js';
import { form, startTestServer, type TestServer } from '../helpers/server.js';

/** Regressions found by fuzzing: each once gave a 500, no answer, Node's empty 417 or a server path. */

const BOUNDARY = 'nestbox-boundary';
const FORM = Buffer.from(
  `--${BOUNDARY}\r\nContent-Disposition: form-data; name="url"\r\n\r\nhttp://example.test/\r\n` +
    `--${BOUNDARY}\r\nContent-Disposition: form-data; name="file"; filename="a.bin"\r\n\r\nsample content\r\n--${BOUNDARY}--\r\n`,
);
const CREATE_ENDPOINTS = CREATE_PATHS.filter((path) => !path.startsWith('/v1'));

describe('malformed requests get a JSON 4xx that names the problem', () => {
  let server: TestServer;
  let port: number;
  before(async () => {
    server = await startTestServer();
    port = Number(new URL(server.url).port);
  });
  after(() => server.close());

  const counts = () =>
    storeCounts(
      async (table) => Number((await server.db.selectFrom(table).select((eb) => eb.fn.countAll().as('n')).executeTakeFirstOrThrow()).n),
      [server.ctx.layout.root, server.ctx.layout.tmp],
    );

  const post = (path: string, contentType: string, body: Buffer) =>
    sendRaw(port, httpRequest('POST', path, [`Content-Type: ${contentType}`], body));

  /** The answer is `{"message": ...}` as json.ts writes it, with that status and message. */
  function assertRefused(answer: RawAnswer, status: number, message: RegExp, what: string): void {
    assert.equal(answer.status, status, `${what}: ${answer.body}`);
    assert.equal(answer.headers['content-type'], 'application/json', what);
    assert.equal(answer.headers['x-content-type-options'], 'nosniff', what);
    const parsed = JSON.parse(answer.body) as { message: string };
    assert.equal(answer.body, `{\n  "message": ${JSON.stringify(parsed.message)}\n}\n`, what);
    assert.match(parsed.message, message, what);
  }

  async function assertRefusedEverywhere(contentType: string, body: Buffer, message: RegExp): Promise<void> {
    const before = await counts();
    for (const path of CREATE_ENDPOINTS) assertRefused(await post(path, contentType, body), 400, message, path);
    assert.deepEqual(await counts(), before, 'a refused request changed storage');
  }

  it('refuses a multipart body without a boundary', async () => {
    await assertRefusedEverywhere('multipart/form-data', FORM, /^The multipart body has no boundary/);
  });

  it('refuses a boundary that never appears in the body', async () => {
    await assertRefusedEverywhere('multipart/form-data; boundary=not-the-one', FORM, /^The multipart body ended before its closing boundary$/);
  });

  it('refuses a boundary longer than 256 characters', async () => {
    const long = 'b'.repeat(257);
    const body = Buffer.from(FORM.toString('latin1').replaceAll(BOUNDARY, long), 'latin1');
    await assertRefusedEverywhere(`multipart/form-data; boundary=${long}`, body, /^The multipart boundary is longer than 256 characters$/);
  });

  it('refuses a body cut off mid-headers, mid-field and mid-file', async () => {
    const text = FORM.toString('latin1');
    for (const at of [40, text.indexOf('example'), text.indexOf('content')]) {
      await assertRefusedEverywhere(`multipart/form-data; boundary=${BOUNDARY}`, FORM.subarray(0, at), /^The multipart body ended (before its closing boundary|in the middle of a part)$/);
    }
  });

  it('refuses random bytes as a multipart body', async () => {
    const noise = Buffer.from([0x00, 0xff, 0x13, 0x37, 0x0d, 0x0a, 0x2d, 0x2d, 0x80, 0x0d, 0x0a, 0x0d, 0x0a]);
    await assertRefusedEverywhere(`multipart/form-data; boundary=${BOUNDARY}`, noise, /^The multipart body ended before its closing boundary$/);
  });

  it('answers CONNECT with a JSON 405 and an Allow list', async () => {
    const answer = await sendRaw(port, 'CONNECT example.test:443 HTTP/1.1\r\nHost: example.test:443\r\n\r\n');
    assertRefused(answer, 405, /^CONNECT is not supported/, 'CONNECT');
    assert.equal(answer.headers.allow, 'GET, HEAD, POST, OPTIONS');
  });

  it('answers an unsupported Expect with a JSON 417 and closes the connection', async () => {
    const answer = await sendRaw(port, 'POST /tasks/create/url HTTP/1.1\r\nHost: 127.0.0.1\r\nExpect: 200-ok\r\nContent-Length: 0\r\n\r\n');
    assertRefused(answer, 417, /^Expect: 200-ok is not supported; only Expect: 100-continue is$/, 'Expect');
    assert.equal(answer.headers.connection, 'close');
  });

  it('answers requests Node cannot parse and URLs Fastify cannot decode in the same JSON', async () => {
    assertRefused(await sendRaw(port, 'FOO / HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n'), 400, /^The request is not valid HTTP: /, 'unknown method');
    assertRefused(await sendRaw(port, `GET / HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Big: ${'a'.repeat(17_000)}\r\n\r\n`), 431, /headers are larger/, 'large headers');
    assertRefused(await sendRaw(port, 'GET /tasks/view/%zz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n'), 400, /is not a valid url component$/, 'bad URL');
  });

  it('answers a pipelined request Node cannot parse only after the request ahead of it', async () => {
    const accepted = httpRequest('POST', '/tasks/create/url', ['Content-Type: application/x-www-form-urlencoded'], Buffer.from('url=http://example.test/'));
    const answer = await sendRaw(port, Buffer.concat([accepted, Buffer.from('FOO / HTTP/1.1\r\n\r\n')]));
    assert.equal(answer.status, 200, answer.body);
    assert.equal(typeof JSON.parse(answer.body).task_id, 'number');
  });

  it('names a damaged 7z in create/submit by its upload name, not by a server path', async () => {
    const damaged = Buffer.from([0x37, 0x7a, 0xbc, 0xaf, 0x27, 0x1c, 0x00, 0x04, ...new Array(64).fill(7)]);
    const { status, body } = await server.json('/tasks/create/submit', { method: 'POST', body: form({}, [['file', 'broken.7z', damaged]]) });
    assert.equal(status, 200);
    assert.equal(body.errors.length, 1);
    assert.match(body.errors[0], /^broken\.7z: could not be read: /);
    assert.ok(!body.errors[0].includes(server.home) && !/upload-[0-9a-f]{8}-/.test(body.errors[0]), body.errors[0]);
    assert.deepEqual(body.task_ids, []);
  });

  it('still serves after all of these', async () => {
    assert.equal((await server.fetch('/machines/list')).status, 200);
  });
});

describe('unrouted requests and the API token', () => {
  let server: TestServer;
  let port: number;
  before(async () => {
    server = await startTestServer({ api: { token: 'fuzz-token' } });
    port = Number(new URL(server.url).port);
  });
  after(() => server.close());

  it('asks for the token before saying anything about CONNECT, Expect or a bad URL', async () => {
    const requests = [
      'CONNECT example.test:443 HTTP/1.1\r\nHost: example.test:443\r\n\r\n',
      'POST /tasks/create/url HTTP/1.1\r\nHost: 127.0.0.1\r\nExpect: 200-ok\r\nContent-Length: 0\r\n\r\n',
      'GET /tasks/view/%zz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n',
    ];
    for (const request of requests) {
      const answer = await sendRaw(port, request);
      assert.equal(answer.status, 401, request);
      assert.match(JSON.parse(answer.body).message, /^Authentication in the form of/, request);
    }
    const allowed = await sendRaw(port, 'CONNECT example.test:443 HTTP/1.1\r\nHost: example.test:443\r\nAuthorization: Bearer fuzz-token\r\n\r\n');
    assert.equal(allowed.status, 405);
  });
});
