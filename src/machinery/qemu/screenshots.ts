import { createHash } from 'node:crypto';
import { readFile, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Logger } from 'pino';
import { runCommand } from '../linux/command.js';
import type { QmpClient } from './qmp.js';

/**
 * Screenshots of the guest's display: QEMU writes the screen as PPM (QMP `screendump`); when it differs
 * from the last one, ImageMagick turns it into shots/0001.jpg, 0002.jpg... as Cuckoo names them.
 */
export const CONVERT = '/usr/bin/convert';

export class QemuScreenshots {
  private running = false;
  private loop: Promise<void> | undefined;
  private lastHash = '';
  private count = 0;

  constructor(
    private readonly qmp: QmpClient,
    private readonly scratchDir: string,
    private readonly shotsDir: string,
    private readonly intervalMs: number,
    private readonly log: Logger,
  ) {}

  get taken(): number {
    return this.count;
  }

  start(): void {
    if (this.running) return;
    this.running = true;
    this.loop = this.run();
  }

  /** Takes a last look at the screen (while QEMU still runs), then stops. */
  async stop(): Promise<void> {
    if (!this.running) return;
    this.running = false;
    await this.loop;
    await this.capture();
  }

  private async run(): Promise<void> {
    while (this.running) {
      const started = Date.now();
      await this.capture();
      await sleep(Math.max(0, this.intervalMs - (Date.now() - started)));
    }
  }

  /** One look at the screen; a new picture only when it changed. Failures are logged, never thrown. */
  async capture(): Promise<boolean> {
    const ppm = join(this.scratchDir, 'screen.ppm');
    try {
      await this.qmp.execute('screendump', { filename: ppm });
      const raw = await readFile(ppm);
      const hash = createHash('sha1').update(raw).digest('hex');
      if (hash === this.lastHash) return false;
      this.lastHash = hash;
      const name = `${String(this.count + 1).padStart(4, '0')}.jpg`;
      const converted = await runCommand([CONVERT, `ppm:${ppm}`, '-quality', '85', `jpg:${join(this.shotsDir, name)}`]);
      if (converted.code !== 0) throw new Error(converted.stderr.trim());
      this.count++;
      return true;
    } catch (error) {
      this.log.warn({ err: error }, 'screenshot failed');
      return false;
    } finally {
      await rm(ppm, { force: true });
    }
  }
}
