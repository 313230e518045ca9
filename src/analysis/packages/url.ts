import { definePackage } from './define.js';

/**
 * URL tasks: chromium opens the URL on the machine's virtual display; a machine without a browser
 * (a linux machine with `browser` off, the qemu guest) fetches it with curl instead.
 */
export const urlPackage = definePackage({
  name: 'url',
  needsDisplay: true,
  aliases: ['chromium', 'browser', 'ie', 'ff'],
  description: 'opens the URL in chromium on the virtual display (fetched with curl where there is no browser)',
  command: [
    '/usr/bin/chromium',
    // Chromium's own sandbox needs privileges the machine does not give; the machine is the sandbox.
    '--no-sandbox',
    // Hides the warning bar --no-sandbox would show on every page (and in every screenshot).
    '--test-type',
    '--no-first-run',
    '--no-default-browser-check',
    '--disable-gpu',
    '--disable-dev-shm-usage',
    '--window-position=0,0',
    '--window-size=1280,800',
    '--user-data-dir=/root/.config/chromium',
    '{url}',
  ],
  fallback: ['/usr/bin/curl', '--silent', '--show-error', '--location', '--max-time', '30', '--output', '/tmp/download', '{url}'],
});
