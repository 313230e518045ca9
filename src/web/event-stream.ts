import type { FastifyReply } from 'fastify';
import { SECURITY_HEADERS } from '../api/headers.js';

/** A comment line every this often keeps proxies and the browser from taking the stream for dead. */
export const HEARTBEAT_MS = 15_000;

/**
 * Server-sent event streams (text/event-stream). Each stream ends when its client goes away or when the
 * server closes (the owner calls closeAll from a preClose hook), so no stream holds the server open.
 */
export class EventStreams {
  private readonly open = new Set<EventStream>();

  constructor(private readonly heartbeatMs = HEARTBEAT_MS) {}

  /** Takes the request over from the framework and starts the stream. */
  start(reply: FastifyReply): EventStream {
    reply.hijack();
    const stream = new EventStream(reply, this.heartbeatMs, () => this.open.delete(stream));
    this.open.add(stream);
    reply.raw.on('close', () => stream.close());
    return stream;
  }

  closeAll(): void {
    for (const stream of this.open) stream.close();
  }
}

export class EventStream {
  private readonly heartbeat: NodeJS.Timeout;
  private readonly closeListeners: Array<() => void> = [];
  private closed = false;

  constructor(
    private readonly reply: FastifyReply,
    heartbeatMs: number,
    onClose: () => void,
  ) {
    this.closeListeners.push(onClose);
    // The connection closes with the stream: a kept-alive socket would hold the server's close().
    reply.raw.writeHead(200, { ...SECURITY_HEADERS, 'content-type': 'text/event-stream; charset=utf-8', connection: 'close' });
    reply.raw.flushHeaders();
    this.heartbeat = setInterval(() => this.write(': heartbeat\n\n'), heartbeatMs);
    this.heartbeat.unref();
  }

  get isClosed(): boolean {
    return this.closed;
  }

  /** One event; `data` is sent as JSON on one line. */
  send(event: string, data: unknown): void {
    this.sendJson(event, JSON.stringify(data));
  }

  /** One event whose data is JSON text already (shared by the streams that send the same thing). */
  sendJson(event: string, json: string): void {
    this.write(`event: ${event}\ndata: ${json}\n\n`);
  }

  onClose(listener: () => void): void {
    if (this.closed) listener();
    else this.closeListeners.push(listener);
  }

  close(): void {
    if (this.closed) return;
    this.closed = true;
    clearInterval(this.heartbeat);
    this.reply.raw.end();
    for (const listener of this.closeListeners) listener();
  }

  private write(text: string): void {
    if (!this.closed && this.reply.raw.writable) this.reply.raw.write(text);
  }
}
