import type { Logger } from 'pino';
import { ScreenshotLoop } from '../screenshot-loop.js';
import { decodeXwd } from './xwd-image.js';

export { CONVERT } from '../screenshot-loop.js';

/**
 * Screenshots of the machine's virtual display: `xwd -root` grabs the screen from a sandbox of its own in
 * the machine's network namespace (where the X server's abstract socket lives; a sample could replace
 * that server, so no X client runs on the host), and xwd-image.ts decodes the grab.
 */
export class ScreenshotTaker extends ScreenshotLoop {
  constructor(
    /** Grabs the screen in xwd format; null when the display is not there. */
    grabXwd: () => Promise<Buffer | null>,
    shotsDir: string,
    intervalMs: number,
    log: Logger,
  ) {
    super(async () => {
      const raw = await grabXwd();
      return raw && decodeXwd(raw).ppm;
    }, shotsDir, intervalMs, log);
  }
}
