import type { ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import type { Logger } from 'pino';
import type { MachineSandboxes } from './machine-sandboxes.js';
import { ScreenshotTaker } from './screenshots.js';

const DISPLAY_READY_MS = 10_000;
const DISPLAY_FD = 4;
/** A 1280x800 grab is 4 MB; anything far larger is not our X server's. */
const MAX_GRAB_BYTES = 64 * 2 ** 20;

export interface VirtualDisplayOptions {
  /** The machine's `screenshots` setting: without it no display is started. */
  enabled: boolean;
  shotsDir: string;
  intervalMs: number;
  log: Logger;
  /** False once a display that fails would no longer matter: the sample ended and did not need it. */
  needed(): boolean;
  warn(message: string): void;
  debug(message: string): void;
}

/**
 * The machine's virtual display: Xvfb in a sandbox of its own (guest root read-only, private /tmp) in the
 * machine's network namespace, and the screenshots taken of it whenever the screen changes.
 */
export class VirtualDisplay {
  private server: ChildProcess | undefined;
  private ready: Promise<void> | undefined;
  private screenshots: ScreenshotTaker | undefined;

  constructor(
    private readonly sandboxes: MachineSandboxes,
    private readonly options: VirtualDisplayOptions,
  ) {}

  /** Starts the display once; the promise never rejects. */
  launch(): Promise<void> {
    if (!this.options.enabled) return Promise.resolve();
    this.ready ??= this.start().catch((error: unknown) => this.options.warn(`no virtual display: ${(error as Error).message}`));
    return this.ready;
  }

  /** Begins taking screenshots, if the display came up. */
  startScreenshots(): void {
    this.screenshots?.start();
  }

  /** Takes the last screenshot and stops. */
  async stopScreenshots(): Promise<void> {
    await this.screenshots?.stop();
  }

  get screenshotsTaken(): number {
    return this.screenshots?.taken ?? 0;
  }

  /** The X server's launcher, for the machine's stop to kill and wait for. */
  get process(): ChildProcess | undefined {
    return this.server;
  }

  private async start(): Promise<void> {
    const argv = ['Xvfb', ':0', '-nolisten', 'tcp', '-screen', '0', '1280x800x24', '-displayfd', String(DISPLAY_FD)];
    const server = this.sandboxes.spawnOnGuestRoot(argv, { tmpfs: { '/tmp': 16 * 2 ** 20 }, extraPipes: 1 });
    this.server = server;
    server.stdout?.resume();
    server.stderr?.resume();
    if (!(await this.whenReady(server))) {
      // A display only started beside a sample that has ended by now (and was killed with the machine)
      // was not needed: no error. One the sample needs, or that failed while the sample ran, is.
      if (this.options.needed()) this.options.warn('the virtual display did not start: no screenshots');
      else this.options.debug('the sample ended before the virtual display was up: no screenshots');
      return;
    }
    this.screenshots = new ScreenshotTaker(() => this.grabScreen(), this.options.shotsDir, this.options.intervalMs, this.options.log);
  }

  /** Xvfb writes its display number to the display fd once it accepts clients. */
  private whenReady(server: ChildProcess): Promise<boolean> {
    return new Promise<boolean>((resolve) => {
      const timer = setTimeout(() => resolve(false), DISPLAY_READY_MS);
      server.stdio[DISPLAY_FD]?.once('data', () => {
        clearTimeout(timer);
        resolve(true);
      });
      server.once('exit', () => {
        clearTimeout(timer);
        resolve(false);
      });
    });
  }

  /** The screen in xwd format, grabbed from a sandbox on the read-only guest root; null on failure. */
  private async grabScreen(): Promise<Buffer | null> {
    const child = this.sandboxes.spawnOnGuestRoot(['xwd', '-root', '-silent', '-display', ':0']);
    const chunks: Buffer[] = [];
    let size = 0;
    child.stdout?.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size <= MAX_GRAB_BYTES) chunks.push(chunk);
      else child.kill('SIGKILL');
    });
    child.stderr?.resume();
    const [code] = (await once(child, 'exit')) as [number | null];
    return code === 0 && size <= MAX_GRAB_BYTES && chunks.length > 0 ? Buffer.concat(chunks) : null;
  }
}
