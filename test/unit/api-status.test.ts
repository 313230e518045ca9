import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { startTestServer, type TestServer } from '../helpers/server.js';

describe('GET /cuckoo/status', () => {
  let server: TestServer;
  before(async () => {
    server = await startTestServer({ machines: [{ name: 'linux1' }] });
  });
  after(() => server.close());

  for (const path of ['/cuckoo/status', '/sandbox/status', '/v1/cuckoo/status', '/v1/sandbox/status']) {
    it(`answers the documented fields at ${path}`, async () => {
      const { status, body, response } = await server.json(path);
      assert.equal(status, 200);
      assert.equal(response.headers.get('content-type'), 'application/json');
      assert.deepEqual(Object.keys(body.tasks).sort(), ['completed', 'pending', 'reported', 'running', 'total']);
      for (const disk of ['analyses', 'binaries', 'temporary']) {
        assert.equal(typeof body.diskspace[disk].total, 'number');
        assert.ok(body.diskspace[disk].free <= body.diskspace[disk].total);
      }
      assert.equal(body.cpuload.length, 3);
      assert.deepEqual(body.machines, { available: 1, total: 1 });
      assert.equal(typeof body.version, 'string');
      assert.equal(typeof body.protocol_version, 'number');
      assert.equal(typeof body.hostname, 'string');
    });
  }

  it('writes JSON as Flask does: sorted keys, indent 2, trailing spaces, final newline', async () => {
    const text = await (await server.fetch('/cuckoo/status')).text();
    assert.ok(text.endsWith('}\n'));
    assert.match(text, /^\{\n {2}"cpu_count": \d+, \n/);
    const compact = await (await server.fetch('/cuckoo/status', { headers: { 'x-requested-with': 'XMLHttpRequest' } })).text();
    assert.match(compact, /^\{"cpu_count":\d+,"cpuload":\[/);
  });

  it('answers unknown routes and trailing slashes with a JSON 404', async () => {
    for (const path of ['/cuckoo/status/', '/nope']) {
      const { status, body } = await server.json(path);
      assert.equal(status, 404);
      assert.equal(typeof body.message, 'string');
    }
  });
});
