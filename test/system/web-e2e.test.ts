import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { Browser } from 'puppeteer-core';
import { launchBrowser, textOf } from '../helpers/browser.js';
import { reportOf, submitSample } from '../helpers/sample-through-api.js';
import { form, startTestServer, type TestServer } from '../helpers/server.js';
import { deleteFromTaskList, openTab, openWatched, unzippedInPage } from '../helpers/web-page.js';

/**
 * Issue 12's end-to-end flow in a real chromium, against a real server with a token and its engine on:
 * sign in, submit, watch live, filter calls, search, compare, download, delete; then hostile URL text.
 */
const TOKEN = 'web-e2e-token-0123456789';
const DOMAIN = 'c2-web-e2e.example';
const OWNER = 'web-e2e';

/** Resolves a name at the fake internet, writes a file, and stays about five seconds (short sleeps: the machine cuts long ones short). */
const SAMPLE = `#!/bin/sh
getent hosts ${DOMAIN}
echo "e2e loot" > /tmp/e2e-loot.txt
for i in 1 2 3 4 5; do sleep 1; done
`;

/**
 * Markup that would run if a page wrote it as HTML. The API refuses whitespace in a URL, so the image
 * tag separates its attributes with '/', which HTML parses the same.
 */
const HOSTILE_URL = `http://hostile-web-e2e.example/?a="><img/src=x/onerror=alert(1)>&b=<script>alert(1)</script>`;

describe('web interface end to end', { timeout: 900_000 }, () => {
  let server: TestServer;
  let browser: Browser;
  let work: string;

  before(async () => {
    work = mkdtempSync(join(tmpdir(), 'nestbox-web-e2e-'));
    server = await startTestServer({ machines: [{ name: 'linux1' }], api: { token: TOKEN } }, { engine: true, pollMs: 200 });
    browser = await launchBrowser();
  });
  after(async () => {
    await browser?.close();
    await server?.close();
    rmSync(work, { recursive: true, force: true });
  });

  it('signs in, submits, watches live, filters calls, searches, compares, downloads and deletes', async () => {
    const { page, problems } = await openWatched(browser, `${server.url}/ui/`);
    await page.type('input[type=password]', TOKEN);
    await page.click('button[type=submit]');
    await page.waitForSelector('#machines');

    const file = join(work, 'e2e.sh');
    writeFileSync(file, SAMPLE, { mode: 0o755 });
    await page.click('.topbar nav a[href="/ui/submit"]');
    const input = await page.waitForSelector('input[type=file]');
    await input!.uploadFile(file);
    await page.type('input[name=timeout]', '30');
    await page.type('input[name=owner]', OWNER);
    await page.select('select[name=priority]', '2');
    // The linux machine also serves platform windows (Windows programs under Wine): the form offers it.
    // (preact sets an option's value as a property: no attribute selector finds it)
    await page.waitForFunction("[...document.querySelectorAll('select[name=platform] option')].some((option) => option.value === 'linux')");
    assert.deepEqual(await page.$$eval('select[name=platform] option', (options) => options.map((option) => option.value)), ['', 'linux', 'windows']);
    await page.click('.submit-form button[type=submit]');
    await page.waitForSelector('.outcomes a.task-id');
    const href = await page.$eval('.outcomes a.task-id', (a) => a.getAttribute('href') ?? '');
    const id = Number(/^\/ui\/analysis\/(\d+)$/.exec(href)?.[1]);
    assert.ok(id > 0, href);
    const view = (await server.json(`/tasks/view/${id}`)).body.task;
    assert.deepEqual([view.owner, view.timeout, view.priority], [OWNER, 30, 2]);

    await page.click('.outcomes a.task-id');
    await page.waitForSelector('.live');
    await page.waitForFunction("document.querySelector('.live .process-tree')?.innerText.includes('getent')", { timeout: 120_000 });
    assert.equal((await server.fetch(`/tasks/report/${id}`)).status, 404, 'a process shows before the report exists');

    await page.waitForSelector('[data-tab="signatures"]', { timeout: 240_000 });
    const report = await reportOf(server, id);
    await openTab(page, 'behaviour');
    await page.waitForSelector('.process-tree .process');
    await page.waitForSelector('table.calls tbody tr');
    await page.type('.call-filters input[name=api]', 'execve');
    await page.waitForFunction("[...document.querySelectorAll('table.calls td.api')].every((cell) => cell.textContent.startsWith('execve'))");
    const execves = report.behavior.processes.flatMap((p: { calls: Array<{ api: string }> }) => p.calls).filter((call: { api: string }) => call.api === 'execve');
    const shown = Number(await page.$eval('table.calls', (e) => e.getAttribute('data-total')));
    assert.ok(shown >= 1 && shown <= execves.length, `${shown} execve calls shown of ${execves.length} in the report`);

    await page.click('.topbar nav a[href="/ui/search"]');
    await page.select('select[name=field]', 'domain');
    await page.type('input[name=q]', DOMAIN);
    await page.keyboard.press('Enter');
    await page.waitForSelector(`#search-results tr[data-task="${id}"]`);
    assert.match(await textOf(page, `#search-results tr[data-task="${id}"]`), new RegExp(DOMAIN.replace(/\./g, '\\.')));

    const second = await submitSample(server, 'e2e-second.sh', '#!/bin/sh\necho second > /tmp/second.txt\n', { owner: OWNER });
    await reportOf(server, second);
    await page.goto(`${server.url}/ui/compare?left=${id}&right=${second}`, { waitUntil: 'domcontentloaded' });
    await page.waitForSelector('[data-section="Processes"]');
    assert.match(await textOf(page, '[data-section="Processes"] [data-diff="left"]'), /e2e\.sh/);
    assert.match(await textOf(page, '[data-section="Processes"] [data-diff="right"]'), /e2e-second\.sh/);

    await page.goto(`${server.url}/ui/analysis/${id}`, { waitUntil: 'domcontentloaded' });
    await page.waitForSelector('[data-tab="dropped"]');
    await openTab(page, 'dropped');
    const dropped = report.dropped.find((entry: { filepath: string }) => entry.filepath === '/tmp/e2e-loot.txt');
    assert.ok(dropped, 'the written file is in the report');
    const link = `/ui/api/tasks/${id}/download/dropped/${dropped.sha256}`;
    await page.waitForSelector(`.dropped a.download[href="${link}"]`);
    // Downloaded as the signed-in page does, with its session cookie and no bearer token.
    assert.equal(await unzippedInPage(page, link), 'e2e loot\n');

    await page.goto(`${server.url}/ui/tasks?owner=${OWNER}`, { waitUntil: 'domcontentloaded' });
    assert.match(await deleteFromTaskList(page, second), /Delete: 1 of 1 done/);
    assert.equal((await server.fetch(`/tasks/view/${second}`)).status, 404);
    assert.equal((await server.fetch(`/tasks/view/${id}`)).status, 200, 'only the chosen task');

    assert.deepEqual(problems, []);
    await page.close();
  });

  it('shows markup in a URL task as text on the task list and the analysis page', async () => {
    const response = await server.fetch('/tasks/create/url', { method: 'POST', body: form({ url: HOSTILE_URL, timeout: '6', owner: OWNER }) });
    assert.equal(response.status, 200, await response.clone().text());
    const id = ((await response.json()) as { task_id: number }).task_id;
    assert.equal((await server.json(`/tasks/view/${id}`)).body.task.target, HOSTILE_URL);

    const list = await openWatched(browser, `${server.url}/ui/tasks?owner=${OWNER}`);
    await list.page.waitForSelector(`.task-table tr[data-task="${id}"]`);
    assert.ok((await textOf(list.page, `.task-table tr[data-task="${id}"]`)).includes(HOSTILE_URL));
    assert.equal(await list.page.$$eval('main img, main script, main [onerror]', (elements) => elements.length), 0);

    await reportOf(server, id);
    const analysis = await openWatched(browser, `${server.url}/ui/analysis/${id}`);
    await analysis.page.waitForSelector('.overview .fields');
    assert.ok((await textOf(analysis.page, '.overview')).includes(HOSTILE_URL));
    assert.equal(await analysis.page.$$eval('main img, main script, main [onerror]', (elements) => elements.length), 0);

    assert.deepEqual(list.problems, []);
    assert.deepEqual(analysis.problems, []);
    await list.page.close();
    await analysis.page.close();
  });
});
