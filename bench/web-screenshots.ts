import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import type { Page } from 'puppeteer-core';
import { launchBrowser, openPage } from '../test/helpers/browser.js';
import { reportOf, submitSample } from '../test/helpers/sample-through-api.js';
import { startTestServer } from '../test/helpers/server.js';
import { openTab } from '../test/helpers/web-page.js';

/**
 * Screenshots of the web interface's main pages for the README, at 1280x800, from a real server whose
 * engine has analysed two real samples on the Linux machine. Usage:
 *   node dist/bench/web-screenshots.js [folder]     (default docs/screenshots)
 */
const DOMAIN = 'c2.screenshots.example';

/** Resolves a name, writes a file, runs a discovery command in a child, so that every page has something to show. */
const DROPPER = `#!/bin/sh
getent hosts ${DOMAIN}
echo "stolen data" > /tmp/loot.txt
sh -c 'id; uname -a; echo child-ran > /tmp/child-note.txt'
for i in 1 2 3; do sleep 1; done
`;
const QUIET = `#!/bin/sh
echo "report" > /tmp/report.txt
`;

const folder = process.argv[2] ?? 'docs/screenshots';

async function main(): Promise<void> {
  mkdirSync(folder, { recursive: true });
  const server = await startTestServer({ machines: [{ name: 'linux1' }] }, { engine: true, pollMs: 200 });
  const browser = await launchBrowser();
  try {
    const dropper = await submitSample(server, 'dropper.sh', DROPPER, { timeout: '20', owner: 'analyst' });
    const quiet = await submitSample(server, 'quiet.sh', QUIET, { timeout: '20', owner: 'analyst' });
    const report = await reportOf(server, dropper);
    await reportOf(server, quiet);

    const { page, problems } = await openPage(browser, 'about:blank');
    await page.setViewport({ width: 1280, height: 800 });
    const shoot = async (name: string): Promise<void> => {
      await page.screenshot({ path: join(folder, `${name}.png`) as `${string}.png` });
      console.log(`${name}.png`);
    };
    const visit = async (path: string, ready: string): Promise<void> => {
      await page.goto(`${server.url}${path}`, { waitUntil: 'domcontentloaded' });
      await page.waitForSelector(ready);
    };

    await visit('/ui/', '#machines .machine, #machines tr, .liveness-live');
    await shoot('dashboard');
    await visit('/ui/submit', 'input[type=file]');
    await shoot('submit');
    await visit('/ui/tasks', '.task-table tbody tr');
    await shoot('task-list');
    await visit(`/ui/analysis/${dropper}`, '.score .score-value');
    await shoot('analysis-overview');
    await openTab(page, 'signatures');
    await page.waitForSelector('.attack-matrix');
    await shoot('signatures-attack');
    await openTab(page, 'behaviour');
    const child = report.behavior.processes.find((p: { command_line: string }) => p.command_line.startsWith('sh -c'));
    if (child) await page.click(`.process[data-pid="${child.pid}"] .process-select`);
    await page.waitForSelector('table.calls tbody tr');
    await shoot('process-tree-calls');
    await visit('/ui/search', 'input[name=q]');
    await search(page, DOMAIN);
    await shoot('search');
    await visit(`/ui/compare?left=${dropper}&right=${quiet}`, '[data-section="Processes"]');
    await shoot('compare');
    if (problems.length > 0) throw new Error(`the pages reported problems:\n${problems.join('\n')}`);
  } finally {
    await browser.close();
    await server.close();
  }
}

async function search(page: Page, domain: string): Promise<void> {
  await page.select('select[name=field]', 'domain');
  await page.type('input[name=q]', domain);
  await page.keyboard.press('Enter');
  await page.waitForSelector('#search-results tbody tr');
}

await main();
