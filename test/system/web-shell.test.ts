import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Browser } from 'puppeteer-core';
import { launchBrowser, openPage, textOf } from '../helpers/browser.js';
import { startTestServer, type TestServer } from '../helpers/server.js';

/** The interface's frame, served by the service: page, assets, deep links, headers, in a real chromium. */
describe('web interface shell', () => {
  let server: TestServer;
  let browser: Browser;

  before(async () => {
    server = await startTestServer();
    browser = await launchBrowser();
  });
  after(async () => {
    await browser?.close();
    await server?.close();
  });

  it('serves its page under /ui/ with a strict Content-Security-Policy', async () => {
    const response = await fetch(`${server.url}/ui/`);
    assert.equal(response.status, 200);
    assert.match(response.headers.get('content-type') ?? '', /^text\/html/);
    const policy = response.headers.get('content-security-policy') ?? '';
    assert.match(policy, /script-src 'self'(;|$)/);
    assert.doesNotMatch(policy, /unsafe-inline|unsafe-eval/);
    assert.match(policy, /frame-ancestors 'none'/);
    assert.match(await response.text(), /<div id="app">/);
  });

  it('serves its bundled assets and nothing outside them', async () => {
    const script = await fetch(`${server.url}/ui/assets/app.js`);
    assert.equal(script.status, 200);
    assert.match(script.headers.get('content-type') ?? '', /javascript/);
    const escape = await fetch(`${server.url}/ui/assets/..%2f..%2fsrc%2fapp.js`);
    assert.notEqual(escape.status, 200);
  });

  it('leads / to /ui/, and answers unknown /ui/api/ paths with a JSON 404', async () => {
    const root = await fetch(`${server.url}/`, { redirect: 'manual' });
    assert.equal(root.status, 302);
    assert.equal(root.headers.get('location'), '/ui/');
    const missing = await fetch(`${server.url}/ui/api/no-such-thing`);
    assert.equal(missing.status, 404);
    assert.match(((await missing.json()) as { message: string }).message, /no such endpoint/);
  });

  it('opens a deep link in chromium with its navigation, and no error or CSP refusal', async () => {
    const { page, problems } = await openPage(browser, `${server.url}/ui/search`);
    assert.equal(await textOf(page, 'h1'), 'Search');
    const links = await page.$$eval('.topbar nav a', (anchors) => anchors.map((a) => a.textContent));
    assert.deepEqual(links, ['Dashboard', 'Submit', 'Tasks', 'Search', 'Compare']);
    await page.click('.topbar nav a[href="/ui/tasks"]');
    // Runs in the page, where `document` exists.
    await page.waitForFunction("document.querySelector('h1')?.textContent === 'Tasks'");
    assert.equal(new URL(page.url()).pathname, '/ui/tasks');
    assert.deepEqual(problems, []);
    await page.close();
  });
});

describe('web interface shell with a token', () => {
  it('loads its page without the token, asks for it, and keeps the API closed', async () => {
    const server = await startTestServer({ api: { token: 'secret-token' } });
    const browser = await launchBrowser();
    try {
      const { page, problems } = await openPage(browser, `${server.url}/ui/tasks`);
      await page.waitForSelector('form input[type=password]');
      assert.equal(await page.$('.topbar'), null, 'nothing but the sign-in form shows');
      assert.deepEqual(problems, []);
      const shell = await fetch(`${server.url}/ui/tasks`);
      assert.equal(shell.status, 200);
      const api = await fetch(`${server.url}/tasks/list`);
      assert.equal(api.status, 401);
      const uiApi = await fetch(`${server.url}/ui/api/no-such-thing`);
      assert.equal(uiApi.status, 401);
      const post = await fetch(`${server.url}/ui/`, { method: 'POST' });
      assert.equal(post.status, 401);
    } finally {
      await browser.close();
      await server.close();
    }
  });
});
