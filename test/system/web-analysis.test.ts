import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Browser, Page } from 'puppeteer-core';
import { launchBrowser, openPage, textOf } from '../helpers/browser.js';
import { reportOf, submitSample } from '../helpers/sample-through-api.js';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { openTab, unzipped } from '../helpers/web-page.js';

/**
 * The analysis page (issue 12) in a real chromium, on tasks analysed for real on the Linux machine:
 * overview, signatures, the process tree and its calls, network, dropped files, live analysis, and
 * hostile report text shown as text.
 */

/**
 * Writes a file, resolves a name, starts children (one of them a discovery command), and stays a few
 * seconds (short sleeps: the machine cuts long ones short), so that the display is up for a screenshot.
 */
const DROPPER = `#!/bin/sh
echo "stolen data" > /tmp/loot.txt
getent hosts c2-web-analysis.example
sh -c 'id; echo child-ran > /tmp/child-note.txt'
for i in 1 2 3; do sleep 1; done
`;

/** Runs about five seconds (short sleeps: the machine cuts long ones short), with a child early on. */
const SLOW = `#!/bin/sh
sh -c 'echo early-child'
for i in 1 2 3 4 5 6; do sleep 1; done
`;

const SCRIPT_TAG = '<script>alert(1)</script>';
const IMG_TAG = '<img src=x onerror=alert(2)>';

/**
 * Markup in its command line, in the names of the files it writes (the '/' of </script> makes a
 * folder), in its User-Agent and in its own strings.
 */
const HOSTILE = `#!/bin/sh
mkdir -p '/tmp/<script>alert(1)<'
echo x > '/tmp/${SCRIPT_TAG}'
echo y > '/tmp/${IMG_TAG}'
sh -c 'echo "${SCRIPT_TAG}" "${IMG_TAG}" > /dev/null'
curl -s -o /dev/null -A '${IMG_TAG}' http://ua-web-analysis.example/
`;

describe('web analysis page', { timeout: 900_000 }, () => {
  let server: TestServer;
  let browser: Browser;

  before(async () => {
    server = await startTestServer({ machines: [{ name: 'linux1' }] }, { engine: true, pollMs: 200 });
    browser = await launchBrowser();
  });
  after(async () => {
    await browser?.close();
    await server?.close();
  });

  it('shows the score, signatures, process tree with its calls, DNS and the dropped file of an analysis', async () => {
    const id = await submitSample(server, 'dropper.sh', DROPPER, { timeout: '20', memory: 'true' });
    const report = await reportOf(server, id);
    const { page, problems } = await openPage(browser, `${server.url}/ui/analysis/${id}`);

    assert.equal(await textOf(page, '.score .score-value'), report.info.score.toFixed(1));
    assert.match(await page.$eval('.score', (e) => e.className), report.info.score >= 5 ? /level-high/ : /level-(low|medium|benign)/);
    assert.match(await textOf(page, '.overview'), /dropper\.sh/);
    assert.match(await textOf(page, '.overview'), new RegExp(report.target.file.sha256));

    await openTab(page, 'signatures');
    const names = report.signatures.map((signature: { name: string }) => signature.name);
    assert.ok(names.includes('user_discovery'), `signatures: ${names.join(', ')}`);
    const shown = await page.$$eval('.signature-name', (elements) => elements.map((e) => e.textContent));
    assert.deepEqual([...shown].sort(), [...names].sort());
    const discovery = await page.$$eval('.attack-matrix .tactic', (columns) =>
      columns.map((column) => ({ tactic: column.querySelector('h3')?.textContent, techniques: [...column.querySelectorAll('.technique .mono')].map((t) => t.textContent) })),
    );
    assert.ok(discovery.find((column) => column.tactic === 'Discovery')?.techniques.includes('T1033'), JSON.stringify(discovery));

    await openTab(page, 'behaviour');
    await page.waitForSelector('.process-tree .process');
    const child = report.behavior.processes.find((p: { command_line: string }) => p.command_line.startsWith('sh -c'));
    assert.ok(child, 'the child shell is in the report');
    await page.click(`.process[data-pid="${child.pid}"] .process-select`);
    await page.waitForFunction(`document.querySelector('.processes h2:nth-of-type(2)')?.textContent.includes('pid ${child.pid}')`);
    await waitForCallsOf(page, child.pid);
    const childCalls = await callRows(page);
    assert.equal(Number(await page.$eval('table.calls', (e) => e.getAttribute('data-total'))), child.calls.length);
    assert.ok(childCalls.every((call) => call.pid === String(child.pid)));
    assert.ok(childCalls.some((call) => call.api.startsWith('execve')));

    const root = report.behavior.processes.find((p: { ppid: number }) => !report.behavior.processes.some((q: { pid: number }) => q.pid === p.ppid));
    await page.click(`.process[data-pid="${root.pid}"] .toggle`);
    await page.waitForFunction(`!document.querySelector('.process[data-pid="${child.pid}"]')`);
    await page.click(`.process[data-pid="${root.pid}"] .toggle`);
    await page.waitForSelector(`.process[data-pid="${child.pid}"]`);

    await page.type('.call-filters input[name=api]', 'execve');
    await page.waitForFunction("[...document.querySelectorAll('table.calls td.api')].every((cell) => cell.textContent.startsWith('execve'))");
    const execves = await callRows(page);
    assert.ok(execves.length >= 1 && execves.length < childCalls.length, `${execves.length} execve of ${childCalls.length} calls`);
    const expected = child.calls.filter((call: { api: string }) => call.api === 'execve').length;
    assert.equal(Number(await page.$eval('table.calls', (e) => e.getAttribute('data-total'))), expected);

    await openTab(page, 'network');
    assert.match(await textOf(page, '.traffic.dns'), /c2-web-analysis\.example/);
    assert.ok(await page.$('.network a.download'), 'the capture can be downloaded');

    await openTab(page, 'dropped');
    const dropped = report.dropped.find((file: { filepath: string }) => file.filepath === '/tmp/loot.txt');
    assert.ok(dropped, 'the written file is in the report');
    assert.match(await textOf(page, '.dropped'), /\/tmp\/loot\.txt/);
    const links = await page.$$eval('.dropped a.download', (anchors) => anchors.map((a) => ({ href: a.getAttribute('href'), text: a.textContent })));
    const link = links.find((l) => l.href === `/ui/api/tasks/${id}/download/dropped/${dropped.sha256}`);
    assert.ok(link, JSON.stringify(links));
    assert.match(link.text ?? '', /zip, password infected/);
    assert.equal(await unzipped(server, link.href!), 'stolen data\n');

    await openTab(page, 'static');
    assert.match(await textOf(page, '.static'), /#!\/bin\/sh/);
    await openTab(page, 'screenshots');
    await page.waitForSelector('.gallery img');
    await page.waitForFunction("[...document.querySelectorAll('.gallery img')].every((img) => img.complete && img.naturalWidth > 0)");
    await openTab(page, 'memory');
    await page.waitForSelector('.memory-dump');
    const dumps = await page.$$eval('.memory-dump a.download', (anchors) => anchors.map((a) => a.getAttribute('href')));
    assert.ok(dumps.includes(`/ui/api/tasks/${id}/download/memory/${root.pid}`), JSON.stringify(dumps));

    assert.deepEqual(problems, []);
    await page.close();
  });

  it('shows a running task live: a process appears before the report exists, then the report opens', async () => {
    const id = await submitSample(server, 'slow.sh', SLOW, { timeout: '30' });
    const { page, problems } = await openPage(browser, `${server.url}/ui/analysis/${id}`, { until: 'load' });
    await page.waitForSelector('.live');
    await page.waitForFunction("document.querySelector('.live .process-tree')?.innerText.includes('early-child')", { timeout: 120_000 });
    const { status } = await server.json(`/tasks/report/${id}`);
    assert.equal(status, 404, 'the report does not exist yet');
    assert.ok((await page.$$('.live table.calls tbody tr')).length > 0, 'its calls are listed as they come');

    await page.waitForSelector('[data-tab="signatures"]', { timeout: 240_000 });
    assert.equal((await server.json(`/tasks/view/${id}`)).body.task.status, 'reported');
    assert.ok(await page.$('.score .score-value'), 'the report replaced the live view');
    assert.deepEqual(problems, []);
    await page.close();
  });

  it('shows markup from the sample as text, runs none of it, and leaves the policy unbroken', async () => {
    const id = await submitSample(server, `${IMG_TAG}.sh`, HOSTILE, { timeout: '20' });
    const report = await reportOf(server, id);
    assert.ok(report.dropped.some((file: { filepath: string }) => file.filepath === `/tmp/${SCRIPT_TAG}`), 'the file is in the report');
    const { page, problems } = await openPage(browser, `${server.url}/ui/analysis/${id}`);
    const dialogs: string[] = [];
    page.on('dialog', async (dialog) => {
      dialogs.push(dialog.message());
      await dialog.dismiss();
    });

    assert.match(await textOf(page, '.overview .target-name'), new RegExp(escapeRegExp(`${IMG_TAG}.sh`)));
    await openTab(page, 'behaviour');
    await page.waitForSelector('.process-tree .process');
    const tree = await textOf(page, '.process-tree');
    assert.ok(tree.includes(SCRIPT_TAG) && tree.includes(IMG_TAG), tree);
    await openTab(page, 'dropped');
    const dropped = await textOf(page, '.dropped');
    assert.ok(dropped.includes(`/tmp/${SCRIPT_TAG}`) && dropped.includes(`/tmp/${IMG_TAG}`), dropped);
    await openTab(page, 'network');
    assert.ok((await textOf(page, '.traffic.http')).includes(IMG_TAG), 'the User-Agent is shown as text');
    await openTab(page, 'strings');
    await page.type('.strings input', 'alert(1)');
    await page.waitForFunction("document.querySelectorAll('.strings-list li').length > 0");
    assert.ok((await textOf(page, '.strings-list')).includes(SCRIPT_TAG));

    assert.equal(await page.$$eval('.analysis script, .analysis img, .analysis [onerror]', (elements) => elements.length), 0);
    assert.deepEqual(dialogs, []);
    assert.deepEqual(problems, []);
    await page.close();
  });
});

/** The rows of the calls table: pid and call name of each. */
function callRows(page: Page): Promise<Array<{ pid: string; api: string }>> {
  return page.$$eval('table.calls tbody tr', (rows) =>
    rows.map((row) => ({ pid: row.children[1]?.textContent ?? '', api: row.children[4]?.textContent ?? '' })),
  );
}

/** Waits until the calls table lists only calls of `pid`. */
async function waitForCallsOf(page: Page, pid: number): Promise<void> {
  await page.waitForFunction(`(() => {
    const rows = [...document.querySelectorAll('table.calls tbody tr')];
    return rows.length > 0 && rows.every((row) => row.children[1].textContent === '${pid}');
  })()`);
}

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}
