import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Browser, Page } from 'puppeteer-core';
import { openPage, textOf, type WatchedPage } from './browser.js';
import type { TestServer } from './server.js';

/**
 * A page of the interface whose problems include any dialog (a script of a sample that ran would open
 * one). Loaded until its DOM is ready, not until the network is idle: live pages keep a stream open.
 */
export async function openWatched(browser: Browser, url: string): Promise<WatchedPage> {
  const watched = await openPage(browser, 'about:blank');
  watched.page.on('dialog', (dialog) => {
    watched.problems.push(`dialog: ${dialog.message()}`);
    void dialog.dismiss();
  });
  await watched.page.goto(url, { waitUntil: 'domcontentloaded' });
  return watched;
}

/** Clicks the button whose text is `label`, once it exists. */
export async function clickButton(page: Page, label: string): Promise<void> {
  const button = await page.waitForSelector(`::-p-xpath(//button[normalize-space(text())="${label}"])`);
  await button!.click();
}

/** Opens a section of the analysis page and waits until it is the selected one. */
export async function openTab(page: Page, key: string): Promise<void> {
  await page.click(`[data-tab="${key}"]`);
  await page.waitForSelector(`[data-tab="${key}"][aria-selected="true"]`);
}

/** The one file of the password-protected zip at `path`, extracted with Debian's unzip and the password infected. */
export async function unzipped(server: TestServer, path: string): Promise<string> {
  const response = await server.fetch(path);
  assert.equal(response.status, 200);
  return unzipInfected(Buffer.from(await response.arrayBuffer()));
}

/** The one file of the password-protected zip at `path`, downloaded by the page itself (with its session cookie). */
export async function unzippedInPage(page: Page, path: string): Promise<string> {
  const base64 = await page.evaluate(`(async () => {
    const response = await fetch(${JSON.stringify(path)});
    if (!response.ok) throw new Error('download: ' + response.status);
    const bytes = new Uint8Array(await response.arrayBuffer());
    let binary = '';
    for (const byte of bytes) binary += String.fromCharCode(byte);
    return btoa(binary);
  })()`);
  return unzipInfected(Buffer.from(base64 as string, 'base64'));
}

function unzipInfected(zip: Buffer): string {
  const folder = mkdtempSync(join(tmpdir(), 'nestbox-web-zip-'));
  try {
    writeFileSync(join(folder, 'download.zip'), zip);
    return execFileSync('unzip', ['-P', 'infected', '-p', join(folder, 'download.zip')], { encoding: 'utf8' });
  } finally {
    rmSync(folder, { recursive: true, force: true });
  }
}

/**
 * On the task list shown in `page`: selects task `id`, deletes it after the page's own question, and
 * returns the notice the page shows.
 */
export async function deleteFromTaskList(page: Page, id: number): Promise<string> {
  await page.waitForSelector(`input[aria-label="select task ${id}"]`);
  await page.click(`input[aria-label="select task ${id}"]`);
  await clickButton(page, 'Delete');
  await clickButton(page, 'Yes, delete');
  return textOf(page, '.notice');
}
