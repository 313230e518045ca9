import assert from 'node:assert/strict';
import http from 'node:http';

/**
 * A server-sent event stream read as a browser's EventSource reads it: `event:` and `data:` lines, and
 * `:` comments. Over node:http on a connection of its own, which `cancel` closes (fetch's connection
 * pool opens a new connection behind a cancelled stream, which then holds the server's close).
 */
export class EventReader {
  readonly comments: string[] = [];
  private readonly events: Array<{ event: string; data: any }> = [];
  private buffer = '';
  private ended = false;
  private wake: (() => void) | undefined;

  private constructor(
    readonly response: http.IncomingMessage,
    private readonly request: http.ClientRequest,
  ) {
    response.setEncoding('utf8');
    response.on('data', (text: string) => {
      this.buffer += text;
      this.parse();
      this.wake?.();
    });
    response.on('close', () => {
      this.ended = true;
      this.wake?.();
    });
  }

  static open(url: string, headers: http.OutgoingHttpHeaders = {}): Promise<EventReader> {
    return new Promise((resolve, reject) => {
      const request = http.get(url, { agent: false, headers }, (response) => resolve(new EventReader(response, request)));
      request.on('error', reject);
    });
  }

  /** The next event, or undefined when the stream ended; fails after `timeoutMs`. */
  async next(timeoutMs = 5000): Promise<{ event: string; data: any } | undefined> {
    await this.waitFor(() => this.events.length > 0, timeoutMs, 'no event in time');
    return this.events.shift();
  }

  /** Events until one satisfies `wanted`; returns its data. */
  async until(wanted: (data: any) => boolean, timeoutMs = 5000): Promise<any> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const next = await this.next(Math.max(1, deadline - Date.now()));
      assert.ok(next, 'the stream ended');
      if (wanted(next.data)) return next.data;
    }
  }

  /** Waits until `count` comment lines have come. */
  async waitForComments(count: number, timeoutMs = 5000): Promise<void> {
    await this.waitFor(() => this.comments.length >= count, timeoutMs, `fewer than ${count} comments in time`);
  }

  cancel(): void {
    this.request.destroy();
  }

  /** Resolves once `ready()` holds or the stream has ended; fails after `timeoutMs`. */
  private async waitFor(ready: () => boolean, timeoutMs: number, message: string): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    while (!ready() && !this.ended) {
      const left = deadline - Date.now();
      assert.ok(left > 0, message);
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, left);
        this.wake = () => {
          clearTimeout(timer);
          resolve();
        };
      });
    }
  }

  private parse(): void {
    for (let end = this.buffer.indexOf('\n\n'); end >= 0; end = this.buffer.indexOf('\n\n')) {
      const lines = this.buffer.slice(0, end).split('\n');
      this.buffer = this.buffer.slice(end + 2);
      this.comments.push(...lines.filter((line) => line.startsWith(':')));
      const event = lines.find((line) => line.startsWith('event: '))?.slice(7);
      const data = lines.find((line) => line.startsWith('data: '))?.slice(6);
      if (event !== undefined) this.events.push({ event, data: JSON.parse(data ?? 'null') });
    }
  }
}
