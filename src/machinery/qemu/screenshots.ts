import { readFile, rm } from 'node:fs/promises';
import { join } from 'node:path';
import type { Logger } from 'pino';
import { ScreenshotLoop } from '../screenshot-loop.js';
import type { QmpClient } from './qmp.js';

/** Screenshots of the guest's display: QEMU writes the screen as PPM (QMP `screendump`). */
export class QemuScreenshots extends ScreenshotLoop {
  constructor(qmp: QmpClient, scratchDir: string, shotsDir: string, intervalMs: number, log: Logger) {
    super(() => screendump(qmp, join(scratchDir, 'screen.ppm')), shotsDir, intervalMs, log);
  }
}

async function screendump(qmp: QmpClient, file: string): Promise<Buffer> {
  try {
    await qmp.execute('screendump', { filename: file });
    return await readFile(file);
  } finally {
    await rm(file, { force: true });
  }
}
