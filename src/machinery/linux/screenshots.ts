import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Logger } from 'pino';
import { runCommand } from './command.js';

/**
 * Screenshots of the machine's virtual display: the host joins the machine's network namespace (the X
 * server's abstract socket lives there), grabs the screen with `xwd -root`, and when it differs from the
 * last grab, converts it to shots/0001.jpg, 0002.jpg... with ImageMagick.
 */
export const CONVERT = '/usr/bin/convert';

export class ScreenshotTaker {
  private running = false;
  private readonly wake = new AbortController();
  private loop: Promise<void> | undefined;
  private lastHash = '';
  private count = 0;

  constructor(
    private readonly netnsPath: string,
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

  /** Takes a last look at the screen, then stops. */
  async stop(): Promise<void> {
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
      const raw = await grab(this.netnsPath);
      if (!raw) return false;
      const hash = createHash('sha1').update(raw.subarray(raw.readUInt32BE(0))).digest('hex');
      if (hash === this.lastHash) return false;
      this.lastHash = hash;
      const name = `${String(this.count + 1).padStart(4, '0')}.jpg`;
      const converted = await runCommand([CONVERT, 'xwd:-', '-quality', '85', `jpg:${join(this.shotsDir, name)}`], { input: raw });
      if (converted.code !== 0) throw new Error(converted.stderr.trim());
      this.count++;
      return true;
    } catch (error) {
      this.log.warn({ err: error }, 'screenshot failed');
      return false;
    }
  }
}

/** The whole screen in xwd format, or null when the display is not there. */
function grab(netnsPath: string): Promise<Buffer | null> {
  return new Promise((resolve) => {
    const child = spawn('nsenter', [`--net=${netnsPath}`, 'xwd', '-root', '-silent', '-display', ':0'], { stdio: ['ignore', 'pipe', 'ignore'] });
    const chunks: Buffer[] = [];
    child.stdout.on('data', (chunk: Buffer) => chunks.push(chunk));
    child.on('error', () => resolve(null));
    child.on('close', (code) => resolve(code === 0 && chunks.length > 0 ? Buffer.concat(chunks) : null));
  });
}
