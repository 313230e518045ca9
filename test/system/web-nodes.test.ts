import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Browser, Page } from 'puppeteer-core';
import { launchBrowser } from '../helpers/browser.js';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { machineOf, secondsAgo as ago } from '../helpers/cluster-rows.js';
import { taskRow } from '../helpers/tasks.js';
import { openWatched } from '../helpers/web-page.js';

let writtenAt = 0;

/** A heartbeat age shown in seconds, for a heartbeat written `seconds` before `writtenAt`. */
function assertAge(shown: string, seconds: number): void {
  const age = Number(/^(\d+)s ago$/.exec(shown)?.[1]);
  const since = (Date.now() - writtenAt) / 1000;
  assert.ok(age >= Math.floor(seconds) && age <= Math.ceil(seconds + since), `${shown} for a heartbeat ${seconds}s before, ${since}s ago`);
}

/** The cells of the dashboard's Nodes panel, row by row, as the page shows them. */
function nodeRows(page: Page): Promise<string[][]> {
  return page.$$eval('#nodes tbody tr', (rows) =>
    rows.map((row) => [...row.querySelectorAll('td')].map((cell) => (cell as unknown as { innerText: string }).innerText.trim())),
  );
}

/**
 * The dashboard's Nodes panel in a real chromium: the nodes of the server's database (written there as
 * their registry would) with role, state, heartbeat age, machines and running tasks, kept current.
 */
describe('web dashboard nodes', () => {
  let server: TestServer;
  let browser: Browser;

  before(async () => {
    // The registry's heartbeat is slowed down: the test writes the nodes' rows, its own included.
    server = await startTestServer({ cluster: { node_name: 'web-main', heartbeat_seconds: 3600, lease_seconds: 7200 }, machines: [{ name: 'linux1' }, { name: 'linux2' }] });
    browser = await launchBrowser();
    writtenAt = Date.now();
    await server.db.deleteFrom('nodes').execute();
    await server.db.insertInto('nodes').values([
      { name: 'web-main', role: 'all', heartbeat_on: ago(1.5), lease_expires_on: ago(-28) },
      { name: 'worker-b', role: 'worker', heartbeat_on: ago(4.5), lease_expires_on: ago(-25) },
      { name: 'worker-gone', role: 'worker', heartbeat_on: ago(7300.5), lease_expires_on: ago(7270) },
    ]).execute();
    await server.db.insertInto('machines').values(machineOf('worker-b', 'b1', true)).execute();
    await server.ctx.stores.tasks.insert(taskRow({ status: 'running', node: 'worker-b' }));
  });
  after(async () => {
    await browser?.close();
    await server?.close();
  });

  it('lists each node with its role, state, heartbeat age, free machines and running tasks, and shows new ones live', async () => {
    const { page, problems } = await openWatched(browser, `${server.url}/ui/`);
    await page.waitForSelector('#nodes tbody tr');
    const rows = await nodeRows(page);
    assert.deepEqual(rows.map((row) => row[0]), ['web-main', 'worker-b', 'worker-gone']);
    assert.deepEqual(rows[0]!.slice(0, 3), ['web-main', 'all', 'live']);
    assertAge(rows[0]![3]!, 1.5);
    assert.deepEqual(rows[0]!.slice(4), ['2 / 2', '0']);
    assert.deepEqual([...rows[1]!.slice(0, 3), ...rows[1]!.slice(4)], ['worker-b', 'worker', 'live', '0 / 1', '1']);
    assertAge(rows[1]![3]!, 4.5);
    assert.deepEqual(rows[2], ['worker-gone', 'worker', 'down', '2h ago', '0 / 0', '0']);
    assert.match(await page.$eval('#machines', (table) => (table as unknown as { innerText: string }).innerText), /b1\s+b1\s+worker-b/);

    await page.waitForFunction("document.querySelector('.liveness-live') !== null");
    // Nothing changes in the database, yet a heartbeat gets older: the page counts on by itself.
    const shownAge = () => page.$eval('#nodes tr[data-node="worker-b"] td:nth-child(4)', (cell) => Number.parseInt((cell as unknown as { innerText: string }).innerText, 10));
    const before = await shownAge();
    await page.waitForFunction(`Number.parseInt(document.querySelector('#nodes tr[data-node="worker-b"] td:nth-child(4)').innerText, 10) > ${before}`, { timeout: 5000 });
    assertAge(`${await shownAge()}s ago`, 4.5);
    // A node that registers behind the page's back: the dashboard's stream brings it.
    await server.db.insertInto('nodes').values({ name: 'worker-c', role: 'worker', heartbeat_on: ago(0), lease_expires_on: ago(-30) }).execute();
    await page.waitForSelector('#nodes tr[data-node="worker-c"]', { timeout: 15_000 });
    assert.deepEqual((await nodeRows(page)).map((row) => row[0]), ['web-main', 'worker-b', 'worker-c', 'worker-gone']);
    assert.deepEqual(problems, []);
    await page.close();
  });
});
