import puppeteer, { type Browser, type Page } from 'puppeteer-core';

/** Debian's chromium, driven over the DevTools protocol (puppeteer-core downloads no browser of its own). */
const CHROMIUM = process.env.NESTBOX_CHROMIUM ?? '/usr/bin/chromium';

export interface WatchedPage {
  page: Page;
  /**
   * What went wrong in the page so far: uncaught errors, console errors (Content-Security-Policy
   * refusals among them) and failed requests. A page that works leaves it empty.
   */
  problems: string[];
}

/**
 * A headless chromium for one test file. Tests run as root here, where chromium refuses its own
 * sandbox; the browser only ever loads nestbox's interface from a loopback server of the test.
 */
export function launchBrowser(): Promise<Browser> {
  return puppeteer.launch({
    executablePath: CHROMIUM,
    headless: true,
    args: ['--no-sandbox', '--disable-gpu', '--disable-dev-shm-usage', '--no-first-run', '--no-default-browser-check'],
  });
}

/**
 * A new page that records its problems, opened at `url` and waited on until the network is idle, or
 * only until it has loaded (`until: 'load'`) for a page that keeps a stream open and is never idle.
 */
export async function openPage(browser: Browser, url: string, { until = 'networkidle0' }: { until?: 'networkidle0' | 'load' } = {}): Promise<WatchedPage> {
  const page = await browser.newPage();
  const problems: string[] = [];
  page.on('pageerror', (error) => problems.push(`page error: ${(error as Error).message}`));
  page.on('console', (message) => {
    if (message.type() === 'error') problems.push(`console: ${message.text()}`);
  });
  page.on('requestfailed', (request) => {
    const reason = request.failure()?.errorText ?? 'failed';
    // A stream the page closes on leaving is not a failure.
    if (reason !== 'net::ERR_ABORTED') problems.push(`request ${request.url()}: ${reason}`);
  });
  await page.goto(url, { waitUntil: until });
  return { page, problems };
}

/** The visible text of the first element matching `selector`, once it exists. */
export async function textOf(page: Page, selector: string): Promise<string> {
  await page.waitForSelector(selector);
  return page.$eval(selector, (element) => (element as unknown as { innerText: string }).innerText);
}
