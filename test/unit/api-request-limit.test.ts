import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { readdirSync } from 'node:fs';
import { after, before, describe, it } from 'node:test';
import { form, startTestServer, type TestServer } from '../helpers/server.js';

/** api.request_limit: the whole of one create request, beside api.upload_limit for each file. */
describe('create requests over api.request_limit', () => {
  const LIMIT = 10_000;
  let server: TestServer;
  before(async () => {
    server = await startTestServer({ api: { upload_limit: 6000, request_limit: LIMIT } });
  });
  after(() => server.close());

  const assertNothingStored = async () => {
    assert.deepEqual(readdirSync(server.ctx.layout.tmp), []);
    assert.deepEqual(readdirSync(server.ctx.layout.binaries), []);
    assert.deepEqual(await server.ctx.stores.tasks.list(), []);
    const submissions = await server.db.selectFrom('submissions').select('id').execute();
    assert.deepEqual(submissions, []);
  };

  /** The form sent without Content-Length (chunked), so only counting its parts can catch it. */
  const chunked = (data: FormData): RequestInit => {
    const encoded = new Response(data);
    return {
      method: 'POST',
      body: encoded.body,
      headers: { 'content-type': encoded.headers.get('content-type')! },
      duplex: 'half',
    } as RequestInit;
  };

  it('refuses a declared Content-Length over the limit before reading the body (submit)', async () => {
    const { status, body, response } = await server.json('/tasks/create/submit', {
      method: 'POST',
      body: form({}, [['files', 'a.bin', randomBytes(5000)], ['files', 'b.bin', randomBytes(5000)]]),
    });
    assert.equal(status, 413);
    assert.match(body.message, /^The request of \d+ bytes is larger than the limit of 10000 bytes \(api\.request_limit\)$/);
    assert.equal(response.headers.get('content-type'), 'application/json');
    await assertNothingStored();
  });

  it('refuses files that each fit api.upload_limit but together pass the limit, keeping nothing (chunked submit)', async () => {
    const data = form({ options: 'route=none' }, [
      ['files', 'one.bin', randomBytes(4000)],
      ['files', 'two.bin', randomBytes(4000)],
      ['files', 'three.bin', randomBytes(4000)],
    ]);
    const response = await server.fetch('/tasks/create/submit', chunked(data));
    assert.equal(response.status, 413);
    const { message } = (await response.json()) as { message: string };
    assert.equal(message, `The request is larger than the limit of ${LIMIT} bytes (api.request_limit)`);
    await assertNothingStored();
  });

  it('counts fields and parts the endpoint does not read (chunked create/file)', async () => {
    const data = form({ custom: 'x'.repeat(3000) }, [
      ['ignored', 'skip.bin', randomBytes(5000)],
      ['file', 'sample.bin', randomBytes(3000)],
    ]);
    const response = await server.fetch('/tasks/create/file', chunked(data));
    assert.equal(response.status, 413);
    assert.match(((await response.json()) as { message: string }).message, /\(api\.request_limit\)$/);
    await assertNothingStored();
  });

  it('still names api.upload_limit when one file alone is too large', async () => {
    const response = await server.fetch('/tasks/create/submit', chunked(form({}, [['files', 'big.bin', randomBytes(7000)]])));
    assert.equal(response.status, 413);
    assert.match(((await response.json()) as { message: string }).message, /limit of 6000 bytes \(api\.upload_limit\)$/);
    await assertNothingStored();
  });

  it('accepts a request just under the limit, with every file', async () => {
    const { status, body } = await server.json('/tasks/create/submit', {
      method: 'POST',
      body: form({}, [['files', 'one.bin', randomBytes(4000)], ['files', 'two.bin', randomBytes(4000)]]),
    });
    assert.equal(status, 200, JSON.stringify(body));
    assert.equal(body.task_ids.length, 2);
    assert.deepEqual(body.errors, []);
  });
});
