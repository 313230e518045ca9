import { execFileSync } from 'node:child_process';
import { pino } from 'pino';
import { ensureGuestRoot } from '../../src/machinery/linux/guest-root.js';
import { parseLinuxSettings } from '../../src/machinery/linux/settings.js';
import { ensureWineLayer } from '../../src/machinery/linux/wine-layer.js';
import { startTestServer, type TestServer } from './server.js';

// Windows samples under Wine on a test server's linux machine.

/**
 * A test server with one linux machine whose Wine layer is built first (1.5 to 2.5 minutes when it is
 * missing, with the packages downloaded), so that no task waits for it.
 */
export async function startWineTestServer(): Promise<TestServer> {
  const settings = parseLinuxSettings({}, 'linux1');
  const log = pino({ level: 'silent' });
  await ensureWineLayer(await ensureGuestRoot(settings, log), settings, log);
  return startTestServer({ machines: [{ name: 'linux1' }] }, { engine: true, pollMs: 200 });
}

/** How many pixels of a screenshot are almost white (ImageMagick counts them). */
export function lightPixels(path: string): number {
  return Number(execFileSync('/usr/bin/convert', [path, '-colorspace', 'gray', '-threshold', '90%', '-format', '%[fx:mean*w*h]', 'info:'], { encoding: 'utf8' }));
}
