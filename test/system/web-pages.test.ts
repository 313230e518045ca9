import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { Browser, Page } from 'puppeteer-core';
import { compareReports } from '../../web/src/compare/report-diff.js';
import { launchBrowser, openPage, textOf, type WatchedPage } from '../helpers/browser.js';
import { reportOf, submitSample } from '../helpers/sample-through-api.js';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { clickButton, deleteFromTaskList } from '../helpers/web-page.js';

/**
 * The dashboard, submit, task list, search and compare pages in a real chromium, against a real
 * server whose engine analyses what the pages submit on the linux machine.
 */
const HOSTILE = '<img src=x onerror=alert(1)>';
const OWNER = 'web-pages-test';

const script = (name: string) => `#!/bin/sh\necho "${name}" > /tmp/${name}.txt\n`;

describe('web pages', () => {
  let server: TestServer;
  let browser: Browser;
  let work: string;
  /** The two tasks the Submit page made, in the order of the files. */
  let submitted: number[] = [];

  before(async () => {
    work = mkdtempSync(join(tmpdir(), 'nestbox-web-pages-'));
    server = await startTestServer({ machines: [{ name: 'linux1' }] }, { engine: true, pollMs: 200 });
    browser = await launchBrowser();
  });
  after(async () => {
    await browser?.close();
    await server?.close();
    rmSync(work, { recursive: true, force: true });
  });

  /**
   * A page whose problems include any dialog (a script of a sample that ran would open one). Loaded
   * until its DOM is ready, not until the network is idle: the dashboard's event stream stays open.
   */
  async function open(path: string): Promise<WatchedPage> {
    const watched = await openPage(browser, 'about:blank');
    watched.page.on('dialog', (dialog) => {
      watched.problems.push(`dialog: ${dialog.message()}`);
      void dialog.dismiss();
    });
    await watched.page.goto(`${server.url}${path}`, { waitUntil: 'domcontentloaded' });
    return watched;
  }

  it('submits two files with options through the Submit page, and links the tasks made', async () => {
    const files = ['web-one.sh', 'web-two.sh'].map((name) => {
      const path = join(work, name);
      writeFileSync(path, script(name.replace('.sh', '')), { mode: 0o755 });
      return path;
    });
    const { page, problems } = await open('/ui/submit');
    const input = await page.waitForSelector('input[type=file]');
    await input!.uploadFile(...files);
    await page.waitForFunction("document.querySelectorAll('.chosen-files li').length === 2");
    await page.type('input[name=timeout]', '8');
    await page.type('input[name=owner]', OWNER);
    await page.select('select[name=priority]', '2');
    await page.select('select[name=route]', 'none');
    await page.click('input[name=enforce_timeout]');
    await page.click('button[type=submit]');
    await page.waitForFunction("document.querySelectorAll('.outcomes a.task-id').length === 2");
    const links = await page.$$eval('.outcomes a.task-id', (anchors) => anchors.map((a) => a.getAttribute('href') ?? ''));
    submitted = links.map((href) => Number(/^\/ui\/analysis\/(\d+)$/.exec(href)?.[1]));
    assert.ok(submitted.every((id) => id > 0), links.join(' '));

    const { body } = await server.json(`/tasks/view/${submitted[0]}`);
    assert.equal(body.task.owner, OWNER);
    assert.equal(body.task.timeout, 8);
    assert.equal(body.task.priority, 2);
    assert.equal(body.task.enforce_timeout, true);
    assert.equal(body.task.options.route, 'none');
    assert.equal(body.task.target.split('/').pop(), 'web-one.sh');
    assert.deepEqual(problems, []);
    await page.close();
  });

  it("shows the server's message for what it refuses", async () => {
    const { page, problems } = await open('/ui/submit');
    await page.click('.tabs button:nth-child(2)');
    await page.type('input[name=url]', 'not a url at all');
    await page.click('button[type=submit]');
    const message = await textOf(page, '.outcomes .error');
    assert.match(message, /url must be an absolute http/);
    // A refusal is a 400 the page expected: chromium logs the failed load, nothing else may go wrong.
    assert.deepEqual(
      problems.filter((problem) => !/status of 400/.test(problem)),
      [],
    );
    await page.close();
  });

  it('previews an archive, and runs the member chosen through the file= option', async () => {
    const dir = join(work, 'archive');
    execFileSync('mkdir', ['-p', dir]);
    writeFileSync(join(dir, 'first.sh'), script('first'), { mode: 0o755 });
    writeFileSync(join(dir, 'second.sh'), script('second'), { mode: 0o755 });
    const archive = join(work, 'pair.zip');
    execFileSync('7z', ['a', '-tzip', '-bd', archive, join(dir, 'first.sh'), join(dir, 'second.sh')], { stdio: 'ignore' });

    const { page, problems } = await open('/ui/submit');
    const input = await page.waitForSelector('input[type=file]');
    await input!.uploadFile(archive);
    await page.click('.archive-preview button');
    await page.waitForSelector('table.members');
    const members = await page.$$eval('table.members tbody tr td.mono', (cells) => cells.map((cell) => cell.textContent));
    assert.deepEqual(members, ['first.sh', 'second.sh']);
    await page.click('input[aria-label="run second.sh"]');
    await page.type('input[name=owner]', OWNER);
    await page.click('button[type=submit]');
    await page.waitForSelector('.outcomes a.task-id');
    const href = await page.$eval('.outcomes a.task-id', (a) => a.getAttribute('href') ?? '');
    const id = Number(href.split('/').pop());
    const { body } = await server.json(`/tasks/view/${id}`);
    assert.equal(body.task.options.file, 'second.sh');
    assert.deepEqual(problems, []);
    await page.close();

    const report = await reportOf(server, id);
    const commands = report.behavior.processes.map((process: { command_line: string }) => process.command_line).join('\n');
    assert.match(commands, /second\.sh/);
    assert.doesNotMatch(commands, /first\.sh/);
  });

  it('lists the tasks, filters them from the URL and from the form, and sorts them', async () => {
    for (const id of submitted) await reportOf(server, id);
    const { page, problems } = await open(`/ui/tasks?owner=${OWNER}`);
    await waitForRows(page, 3);
    const ids = await taskIds(page);
    for (const id of submitted) assert.ok(ids.includes(id), `task ${id} listed: ${ids.join(',')}`);

    await page.click('thead a[href*="sort=id"]');
    await page.waitForFunction("location.search.includes('sort=id') && location.search.includes('order=desc')");
    await page.click('thead a[href*="sort=id"][href*="order=asc"]');
    await page.waitForFunction("location.search.includes('order=asc')");
    await waitForLoaded(page);
    const ascending = await taskIds(page);
    assert.deepEqual(ascending, [...ascending].sort((a, b) => a - b));

    await page.$eval('input[name=owner]', (element) => ((element as unknown as { value: string }).value = ''));
    await page.type('input[name=owner]', 'nobody-at-all');
    await page.click('.filters button[type=submit]');
    await page.waitForFunction("location.search.includes('owner=nobody-at-all')");
    await page.waitForFunction("document.querySelectorAll('.task-table tbody tr').length === 0");
    assert.match(await textOf(page, 'main'), /No task matches/);

    const reported = await open(`/ui/tasks?owner=${OWNER}&state=reported&scoreMax=10`);
    await waitForRows(reported.page, 3);
    assert.equal(await reported.page.$eval('select[name=state]', (s) => (s as unknown as { value: string }).value), 'reported');
    assert.deepEqual(problems, []);
    assert.deepEqual(reported.problems, []);
    await page.close();
    await reported.page.close();
  });

  it('shows the queue, machines and recent analyses on the dashboard, and updates it live', async () => {
    const { page, problems } = await open('/ui/');
    await page.waitForSelector('#machines');
    assert.match(await textOf(page, '#machines'), /linux1/);
    await page.waitForFunction("document.querySelector('.liveness-live') !== null");
    const recent = await textOf(page, '.task-table');
    assert.match(recent, /web-one\.sh/);
    const totalBefore = Number(await textOf(page, '[data-total]'));

    // Made behind the page's back: the stream brings it.
    const id = await submitSample(server, `${HOSTILE}.sh`, script('hostile'), { owner: OWNER });
    await page.waitForFunction(`document.querySelector('[data-total]')?.textContent === '${totalBefore + 1}'`, { timeout: 15_000 });
    await page.waitForSelector(`.task-table tr[data-task="${id}"]`);
    const row = await textOf(page, `.task-table tr[data-task="${id}"]`);
    assert.ok(row.includes(`${HOSTILE}.sh`), row);
    assert.equal(await page.$('main img'), null, 'the name stayed text');
    assert.deepEqual(problems, []);
    await page.close();
    await reportOf(server, id);
  });

  it('shows a hostile file name as text in the task list and the comparison', async () => {
    const { body } = await server.json(`/tasks/list`);
    const hostile = body.tasks.find((task: { target: string }) => task.target.endsWith(`${HOSTILE}.sh`));
    const { page, problems } = await open(`/ui/tasks?owner=${OWNER}`);
    await page.waitForSelector(`.task-table tr[data-task="${hostile.id}"]`);
    assert.ok((await textOf(page, `.task-table tr[data-task="${hostile.id}"]`)).includes(HOSTILE));
    assert.equal(await page.$('main img'), null);
    const compare = await open(`/ui/compare?left=${hostile.id}&right=${submitted[0]}`);
    await compare.page.waitForSelector('.compare-head');
    assert.ok((await textOf(compare.page, '.compare-head')).includes(HOSTILE));
    assert.equal(await compare.page.$('main img'), null);
    assert.deepEqual(problems, []);
    assert.deepEqual(compare.problems, []);
    await page.close();
    await compare.page.close();
  });

  it('compares two tasks section by section, as the diff of their reports says', async () => {
    const [left, right] = submitted as [number, number];
    const { page, problems } = await open(`/ui/compare?left=${left}&right=${right}`);
    await page.waitForSelector('[data-section="Processes"]');
    const reports = await Promise.all([left, right].map(async (id) => (await server.json(`/tasks/report/${id}/json`)).body));
    const diff = compareReports(reports[0], reports[1]);
    const sections: Array<[string, { same: unknown[]; onlyLeft: unknown[]; onlyRight: unknown[] }]> = [
      ['Signatures', diff.signatures],
      ['Processes', diff.processes],
      ['Dropped files', diff.dropped],
      ['Files written', diff.written],
      ['Domains', diff.domains],
    ];
    assert.ok(diff.processes.onlyLeft.length > 0, 'each script is its own process');
    for (const [title, part] of sections) {
      const counts = await page.$$eval(`[data-section="${title}"] .diff-column`, (columns) =>
        columns.map((column) => column.querySelectorAll('li').length),
      );
      const expected = part.same.length + part.onlyLeft.length + part.onlyRight.length === 0 ? [] : [part.onlyLeft.length, part.same.length, part.onlyRight.length];
      assert.deepEqual(counts, expected, title);
    }
    assert.match(await textOf(page, '#compare-score'), /\d\.\d/);
    assert.match(await textOf(page, '[data-section="Processes"] [data-diff="left"]'), /web-one\.sh/);
    assert.match(await textOf(page, '[data-section="Processes"] [data-diff="right"]'), /web-two\.sh/);

    // The task list leads to the same view when two tasks are selected, the form too.
    const list = await open(`/ui/tasks?owner=${OWNER}`);
    for (const id of [right, left]) {
      await list.page.waitForSelector(`input[aria-label="select task ${id}"]`);
      await list.page.click(`input[aria-label="select task ${id}"]`);
    }
    await list.page.click('.bulk-bar a.button');
    await list.page.waitForFunction(`location.pathname === '/ui/compare' && location.search === '?left=${left}&right=${right}'`);
    await list.page.waitForSelector('[data-section="Processes"]');
    assert.deepEqual(list.problems, []);
    await list.page.close();

    const blank = await open('/ui/compare');
    await blank.page.type('input[name=left]', String(right));
    await blank.page.type('input[name=right]', String(left));
    await blank.page.click('.compare-form button[type=submit]');
    await blank.page.waitForFunction(`location.search === '?left=${right}&right=${left}'`);
    await blank.page.waitForSelector('[data-section="Processes"]');
    assert.deepEqual(problems, []);
    assert.deepEqual(blank.problems, []);
    await page.close();
    await blank.page.close();
  });

  it('finds a task by the sha256 of its sample', async (t) => {
    const probe = await server.fetch('/ui/api/search?q=x');
    if (probe.status === 404) return t.skip('GET /ui/api/search is not there yet (web-search)');
    const sha256 = createHash('sha256').update(script('web-one')).digest('hex');
    const { page, problems } = await open(`/ui/search`);
    await page.select('select[name=field]', 'sha256');
    await page.type('input[name=q]', sha256);
    await page.keyboard.press('Enter');
    await page.waitForSelector(`#search-results tr[data-task="${submitted[0]}"]`);
    assert.match(await textOf(page, `#search-results tr[data-task="${submitted[0]}"]`), new RegExp(sha256));
    assert.match(page.url(), /field=sha256/);
    assert.deepEqual(problems, []);
    await page.close();
  });

  it('deletes a selected task in bulk, after asking in the page', async () => {
    const victim = submitted[1]!;
    const { page, problems } = await open(`/ui/tasks?owner=${OWNER}`);
    await page.waitForSelector(`.task-table tr[data-task="${victim}"]`);
    await page.click(`input[aria-label="select task ${victim}"]`);
    await clickButton(page, 'Delete');
    await clickButton(page, 'Yes, delete');
    assert.match(await textOf(page, '.notice'), /Delete: 1 of 1 done/);
    await page.waitForFunction(`document.querySelector('.task-table tr[data-task="${victim}"]') === null`);
    assert.equal((await server.fetch(`/tasks/view/${victim}`)).status, 404);
    assert.equal((await server.fetch(`/tasks/view/${submitted[0]}`)).status, 200, 'only the chosen task');
    assert.deepEqual(problems, []);
    await page.close();
  });
});

describe('web pages with a token', () => {
  it('sign in, then submit and delete through the session cookie and its CSRF value', async () => {
    const server = await startTestServer({ api: { token: 'web-pages-token' } });
    const browser = await launchBrowser();
    try {
      const { page, problems } = await openPage(browser, `${server.url}/ui/submit`);
      await page.type('input[type=password]', 'web-pages-token');
      await page.click('button[type=submit]');
      await page.waitForSelector('.tabs');
      await page.click('.tabs button:nth-child(2)');
      await page.type('input[name=url]', 'http://example.test/page');
      await page.click('.submit-form button[type=submit]');
      await page.waitForSelector('.outcomes a.task-id');
      const id = Number((await page.$eval('.outcomes a.task-id', (a) => a.getAttribute('href') ?? '')).split('/').pop());
      assert.equal((await server.json(`/tasks/view/${id}`)).body.task.target, 'http://example.test/page');

      await page.click('.topbar nav a[href="/ui/tasks"]');
      assert.match(await deleteFromTaskList(page, id), /Delete: 1 of 1 done/);
      assert.equal((await server.fetch(`/tasks/view/${id}`)).status, 404);
      assert.deepEqual(problems, []);
    } finally {
      await browser.close();
      await server.close();
    }
  });
});

async function waitForRows(page: Page, atLeast: number): Promise<void> {
  await page.waitForFunction(`document.querySelectorAll('.task-table tbody tr').length >= ${atLeast}`);
}

/**
 * The list keeps the rows it has, dimmed (aria-busy), until those of a new sort, filter or page come: they
 * have once it is no longer busy. The page renders the new view as it changes the URL, before any check.
 */
async function waitForLoaded(page: Page): Promise<void> {
  await page.waitForSelector('.task-list[aria-busy="false"]');
}

async function taskIds(page: Page): Promise<number[]> {
  return page.$$eval('.task-table tbody tr', (rows) => rows.map((row) => Number(row.getAttribute('data-task'))));
}
