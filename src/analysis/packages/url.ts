import type { AnalysisPackage } from './types.js';

/** URL tasks: chromium opens the URL on the machine's virtual display. */
export const urlPackage: AnalysisPackage = {
  name: 'url',
  needsDisplay: true,
  aliases: ['chromium', 'browser', 'ie', 'ff'],
  description: 'opens the URL in chromium on the virtual display',
  matches: () => false,
  command: ({ url }) => [
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
    url,
  ],
};
