import { createHash } from 'node:crypto';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Logger } from 'pino';
import { runCommand } from './host/command.js';

/**
 * The screenshot loop of every machine kind: it looks at the screen every interval and, when the picture
 * differs from the last one, ImageMagick writes it as shots/0001.jpg, 0002.jpg... as Cuckoo names them.
 * A kind only says how to grab a frame.
 */
export const CONVERT = '/usr/bin/convert';

/** Grabs the screen as a PPM image; null when there is no screen to grab. */
export type FrameGrabber = () => Promise<Buffer | null>;

export class ScreenshotLoop {
  private running = false;
  /** Once stopped, never started again (the display may come up after a quick sample is done). */
  private ended = false;
  private readonly wake = new AbortController();
  private loop: Promise<void> | undefined;
  private lastHash = '';
  private count = 0;

  constructor(
    private readonly grabFrame: FrameGrabber,
    private readonly shotsDir: string,
    private readonly intervalMs: number,
    private readonly log: Logger,
  ) {}

  get taken(): number {
    return this.count;
  }

  start(): void {
    if (this.running || this.ended) return;
    this.running = true;
    this.loop = this.run();
  }

  /** Takes a last look at the screen (the machine still runs), then stops. */
  async stop(): Promise<void> {
    this.ended = true;
    if (!this.running) return;
    this.running = false;
    this.wake.abort();
    await this.loop;
    await this.capture();
  }

  private async run(): Promise<void> {
    while (this.running) {
      const started = Date.now();
      await this.capture();
      await sleep(Math.max(0, this.intervalMs - (Date.now() - started)), undefined, { signal: this.wake.signal }).catch(() => undefined);
    }
  }

  /** One look at the screen; a new picture only when it changed. Failures are logged, never thrown. */
  async capture(): Promise<boolean> {
    try {
      const ppm = await this.grabFrame();
      if (!ppm) return false;
      const hash = createHash('sha1').update(ppm).digest('hex');
      if (hash === this.lastHash) return false;
      this.lastHash = hash;
      await this.writeJpeg(ppm, `${String(this.count + 1).padStart(4, '0')}.jpg`);
      this.count++;
      return true;
    } catch (error) {
      this.log.warn({ err: error }, 'screenshot failed');
      return false;
    }
  }

  private async writeJpeg(ppm: Buffer, name: string): Promise<void> {
    const converted = await runCommand([CONVERT, 'ppm:-', '-quality', '85', `jpg:${join(this.shotsDir, name)}`], { input: ppm });
    if (converted.code !== 0) throw new Error(converted.stderr.trim());
  }
}
