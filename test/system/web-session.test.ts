import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { taskRow } from '../helpers/tasks.js';

const TOKEN = 'web-session-token-0123456789';
const AUTH_MESSAGE = "Authentication in the form of an 'Authorization: Bearer <TOKEN>' header is required";

/** Requests as a browser sends them: no Bearer header, the cookie it was given. */
function browserFetch(server: TestServer, path: string, init: RequestInit & { cookie?: string; csrf?: string } = {}) {
  const headers = new Headers(init.headers);
  if (init.cookie) headers.set('cookie', init.cookie);
  if (init.csrf) headers.set('x-nestbox-csrf', init.csrf);
  return fetch(server.url + path, { ...init, headers, redirect: 'manual' });
}

async function signIn(server: TestServer, token = TOKEN) {
  const response = await browserFetch(server, '/ui/api/session', {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ token }),
  });
  const body = (await response.json()) as { authenticated?: boolean; csrf?: string; message?: string };
  const setCookie = response.headers.get('set-cookie');
  const cookie = setCookie?.split(';')[0];
  return { response, body, setCookie, cookie };
}

describe('web sign-in with a token', () => {
  let server: TestServer;
  let taskId: number;
  before(async () => {
    server = await startTestServer({ api: { token: TOKEN } });
    taskId = await server.ctx.stores.tasks.insert(taskRow({ status: 'reported', category: 'url', target: 'http://example.test/' }));
  });
  after(() => server.close());

  it('says sign-in is needed, and refuses a wrong token with 401 and no cookie', async () => {
    const state = await browserFetch(server, '/ui/api/session');
    assert.equal(state.status, 200);
    assert.deepEqual(await state.json(), { authRequired: true, authenticated: false, csrf: null });
    for (const token of ['wrong', '', TOKEN.slice(0, -1), `${TOKEN}x`]) {
      const { response, body, setCookie } = await signIn(server, token);
      assert.equal(response.status, 401, token);
      assert.equal(typeof body.message, 'string');
      assert.equal(setCookie, null);
    }
    const notJson = await browserFetch(server, '/ui/api/session', { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"token": 5}' });
    assert.equal(notJson.status, 400);
  });

  it('signs in with the token: an HttpOnly, SameSite=Strict cookie on /, with an expiry', async () => {
    const { response, body, setCookie } = await signIn(server);
    assert.equal(response.status, 200);
    assert.equal(body.authenticated, true);
    assert.match(body.csrf ?? '', /^[A-Za-z0-9_-]{40,}$/);
    const attributes = setCookie!.split(';').map((part) => part.trim());
    assert.match(attributes[0]!, /^nestbox_session=[A-Za-z0-9_-]{40,}$/);
    assert.ok(attributes.includes('HttpOnly'));
    assert.ok(attributes.includes('SameSite=Strict'));
    assert.ok(attributes.includes('Path=/'));
    assert.ok(!attributes.includes('Secure'), 'plain HTTP: a Secure cookie would never come back');
    const maxAge = Number(attributes.find((part) => part.startsWith('Max-Age='))?.slice('Max-Age='.length));
    assert.ok(maxAge > 3600 && maxAge <= 24 * 3600, `Max-Age ${maxAge}`);
    assert.notEqual(body.csrf, attributes[0]!.split('=')[1], 'the CSRF value is not the session id');
  });

  it('lets the cookie read every API route, Cuckoo and UI, and tells the page its CSRF value', async () => {
    const { cookie, body } = await signIn(server);
    const state = await browserFetch(server, '/ui/api/session', { cookie });
    assert.deepEqual(await state.json(), { authRequired: true, authenticated: true, csrf: body.csrf });
    for (const path of ['/cuckoo/status', `/tasks/view/${taskId}`, '/tasks/list', '/machines/list', '/ui/api/tasks', '/ui/api/dashboard']) {
      const answer = await browserFetch(server, path, { cookie });
      assert.equal(answer.status, 200, path);
      await answer.arrayBuffer();
    }
    // Twice: the second answer of a cacheable route comes from the response cache, which checks too.
    for (let i = 0; i < 2; i++) {
      assert.equal((await browserFetch(server, `/tasks/view/${taskId}`, { cookie })).status, 200);
      assert.equal((await browserFetch(server, `/tasks/view/${taskId}`, { cookie: 'nestbox_session=forged' })).status, 401);
    }
  });

  it('refuses a changing request authenticated by the cookie without the matching X-Nestbox-CSRF header (403)', async () => {
    const { cookie, body } = await signIn(server);
    const bulk = (csrf?: string) =>
      browserFetch(server, '/ui/api/tasks/bulk', {
        method: 'POST',
        cookie,
        csrf,
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ action: 'rereport', ids: [taskId] }),
      });
    for (const csrf of [undefined, 'wrong', `${body.csrf}x`]) {
      const refused = await bulk(csrf);
      assert.equal(refused.status, 403, String(csrf));
      assert.match(((await refused.json()) as { message: string }).message, /X-Nestbox-CSRF/);
    }
    assert.equal((await server.ctx.stores.tasks.get(taskId))?.status, 'reported', 'nothing changed');
    // A Cuckoo route that takes a form: the same rule.
    const form = new FormData();
    form.append('url', 'http://example.test/');
    assert.equal((await browserFetch(server, '/tasks/create/url', { method: 'POST', cookie, body: form })).status, 403);
    const created = await browserFetch(server, '/tasks/create/url', { method: 'POST', cookie, csrf: body.csrf, body: form });
    assert.equal(created.status, 200);
    const accepted = await bulk(body.csrf);
    assert.equal(accepted.status, 200);
    assert.deepEqual(await accepted.json(), { results: [{ id: taskId, ok: true }] });
    assert.equal((await server.ctx.stores.tasks.get(taskId))?.status, 'completed');
    await server.ctx.stores.tasks.update(taskId, { status: 'reported' });
  });

  it('does not take one session CSRF value for another session', async () => {
    const first = await signIn(server);
    const second = await signIn(server);
    const answer = await browserFetch(server, '/ui/api/session', { method: 'DELETE', cookie: first.cookie, csrf: second.body.csrf });
    assert.equal(answer.status, 403);
  });

  it('keeps Bearer clients as they were: no cookie, no CSRF header, same 401 without the token', async () => {
    const bearer = { authorization: `Bearer ${TOKEN}` };
    const created = await browserFetch(server, '/tasks/create/url', { method: 'POST', headers: bearer, body: new URLSearchParams({ url: 'http://example.test/b' }) });
    assert.equal(created.status, 200);
    const bulk = await browserFetch(server, '/ui/api/tasks/bulk', {
      method: 'POST',
      headers: { ...bearer, 'content-type': 'application/json' },
      body: JSON.stringify({ action: 'rereport', ids: [999999] }),
    });
    assert.equal(bulk.status, 200);
    const refused = await browserFetch(server, '/tasks/list');
    assert.equal(refused.status, 401);
    assert.deepEqual(await refused.json(), { message: AUTH_MESSAGE });
    // The cookie of another scheme, or a session id sent as a Bearer token, is nothing.
    const { cookie } = await signIn(server);
    const id = cookie!.split('=')[1];
    assert.equal((await browserFetch(server, '/tasks/list', { headers: { authorization: `Bearer ${id}` } })).status, 401);
  });

  it('keeps the data closed to a browser that has not signed in, behind any spelling of the path', async () => {
    for (const path of ['/ui/api/tasks', '/ui/api/dashboard', '/ui/api/dashboard/stream', '/ui/%61pi/tasks', '/ui/api/no-such', `/ui/api/tasks/${taskId}/download/pcap`]) {
      const answer = await browserFetch(server, path);
      if (answer.status === 200) assert.match(answer.headers.get('content-type') ?? '', /^text\/html/, `${path} may only be the page`);
      else assert.equal(answer.status, 401, path);
      await answer.arrayBuffer();
    }
  });

  it('signs out: the cookie is cleared and no longer opens anything', async () => {
    const { cookie, body } = await signIn(server);
    const out = await browserFetch(server, '/ui/api/session', { method: 'DELETE', cookie, csrf: body.csrf });
    assert.equal(out.status, 200);
    assert.match(out.headers.get('set-cookie') ?? '', /^nestbox_session=; .*Max-Age=0/);
    assert.equal((await browserFetch(server, '/tasks/list', { cookie })).status, 401);
    const state = await browserFetch(server, '/ui/api/session', { cookie });
    assert.equal(((await state.json()) as { authenticated: boolean }).authenticated, false);
  });
});

describe('web interface without a token', () => {
  let server: TestServer;
  before(async () => {
    server = await startTestServer();
  });
  after(() => server.close());

  it('opens directly, and its own changing endpoints still need the per-process CSRF value', async () => {
    const state = (await (await browserFetch(server, '/ui/api/session')).json()) as { authRequired: boolean; authenticated: boolean; csrf: string };
    assert.equal(state.authRequired, false);
    assert.equal(state.authenticated, true);
    assert.match(state.csrf, /^[A-Za-z0-9_-]{40,}$/);
    const bulk = (csrf?: string) =>
      browserFetch(server, '/ui/api/tasks/bulk', {
        method: 'POST',
        csrf,
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ action: 'delete', ids: [12345] }),
      });
    assert.equal((await bulk()).status, 403);
    assert.equal((await bulk('guess')).status, 403);
    const accepted = await bulk(state.csrf);
    assert.equal(accepted.status, 200);
    assert.deepEqual(await accepted.json(), { results: [{ id: 12345, ok: false, message: 'Task not found' }] });
    // The Cuckoo API stays open to its clients, as in Cuckoo.
    const created = await browserFetch(server, '/tasks/create/url', { method: 'POST', body: new URLSearchParams({ url: 'http://example.test/' }) });
    assert.equal(created.status, 200);
    assert.equal(created.headers.get('access-control-allow-origin'), null, 'no CORS: another site cannot read the CSRF value');
  });
});
