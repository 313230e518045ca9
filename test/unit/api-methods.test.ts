import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { startTestServer, type TestServer } from '../helpers/server.js';

describe('HTTP methods', () => {
  let server: TestServer;
  before(async () => {
    server = await startTestServer();
  });
  after(() => server.close());

  it('answers a wrong method with a JSON 405 and the Allow list', async () => {
    for (const [method, path, allow] of [
      ['POST', '/tasks/list', 'GET, HEAD, OPTIONS'],
      ['DELETE', '/tasks/view/1', 'GET, HEAD, OPTIONS'],
      ['GET', '/tasks/create/file', 'POST, OPTIONS'],
      ['PUT', '/v1/tasks/create/url', 'POST, OPTIONS'],
    ] as const) {
      const { status, body, response } = await server.json(path, { method });
      assert.equal(status, 405, `${method} ${path}`);
      assert.equal(response.headers.get('allow'), allow);
      assert.equal(response.headers.get('content-type'), 'application/json');
      assert.match(body.message, new RegExp(`^${method} is not allowed`));
    }
  });

  it('answers OPTIONS with 200, an empty body and the Allow list', async () => {
    const response = await server.fetch('/cuckoo/status', { method: 'OPTIONS' });
    assert.equal(response.status, 200);
    assert.equal(response.headers.get('allow'), 'GET, HEAD, OPTIONS');
    assert.equal(await response.text(), '');
  });

  it('gives errors thrown by handlers a JSON content type', async () => {
    const { status, response } = await server.json('/tasks/view/999');
    assert.equal(status, 404);
    assert.equal(response.headers.get('content-type'), 'application/json');
  });

  it('checks the token before the method, as Cuckoo does', async () => {
    const secured = await startTestServer({ api: { token: 'sekrit' } });
    try {
      const response = await fetch(`${secured.url}/tasks/list`, { method: 'POST' });
      assert.equal(response.status, 401);
    } finally {
      await secured.close();
    }
  });
});
