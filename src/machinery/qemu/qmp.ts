import { EventEmitter } from 'node:events';
import { connect, type Socket } from 'node:net';
import { internal, unavailable } from '../../errors.js';

/**
 * A client of QEMU's machine protocol (QMP) over its unix socket: one JSON object per line. Commands
 * are answered in order; asynchronous events (STOP, SHUTDOWN, MIGRATION...) are emitted as 'event'.
 */
export interface QmpEvent {
  event: string;
  data?: Record<string, unknown>;
}

interface Pending {
  command: string;
  resolve(value: unknown): void;
  reject(error: Error): void;
}

export class QmpClient extends EventEmitter {
  private buffer = '';
  private readonly pending: Pending[] = [];
  private closedError: Error | null = null;
  private greeted = false;
  private greetingWaiter: ((error?: Error) => void) | null = null;

  private constructor(private readonly socket: Socket) {
    super();
    socket.setEncoding('utf8');
    socket.on('data', (chunk: string) => this.receive(chunk));
    socket.on('error', (error) => this.fail(error));
    socket.on('close', () => this.fail(new Error('QMP connection closed')));
  }

  /** Connects, reads the greeting and leaves capabilities negotiation mode. */
  static async connect(path: string, timeoutMs = 5000): Promise<QmpClient> {
    const socket = await openSocket(path, timeoutMs);
    const client = new QmpClient(socket);
    await client.greeting(timeoutMs);
    await client.execute('qmp_capabilities');
    return client;
  }

  execute<T = unknown>(command: string, args?: Record<string, unknown>): Promise<T> {
    if (this.closedError) return Promise.reject(unavailable(`QMP ${command}: ${this.closedError.message}`));
    return new Promise<T>((resolve, reject) => {
      this.pending.push({ command, resolve: resolve as (value: unknown) => void, reject });
      this.socket.write(`${JSON.stringify(args ? { execute: command, arguments: args } : { execute: command })}\n`);
    });
  }

  close(): void {
    this.socket.destroy();
  }

  private greeting(timeoutMs: number): Promise<void> {
    if (this.greeted) return Promise.resolve();
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(unavailable('QEMU sent no QMP greeting')), timeoutMs);
      this.greetingWaiter = (error) => {
        clearTimeout(timer);
        if (error) reject(error);
        else resolve();
      };
    });
  }

  private receive(chunk: string): void {
    this.buffer += chunk;
    let newline: number;
    while ((newline = this.buffer.indexOf('\n')) >= 0) {
      const line = this.buffer.slice(0, newline).trim();
      this.buffer = this.buffer.slice(newline + 1);
      if (line) this.dispatch(JSON.parse(line) as Record<string, unknown>);
    }
  }

  private dispatch(message: Record<string, unknown>): void {
    if ('QMP' in message) {
      this.greeted = true;
      this.greetingWaiter?.();
    } else if ('event' in message) {
      this.emit('event', message as unknown as QmpEvent);
    } else if ('return' in message || 'error' in message) {
      const waiter = this.pending.shift();
      if (!waiter) return;
      if ('return' in message) waiter.resolve(message.return);
      else {
        const error = message.error as { class?: string; desc?: string };
        waiter.reject(internal(`QMP ${waiter.command} failed: ${error.desc ?? error.class}`, { context: { error } }));
      }
    }
  }

  private fail(error: Error): void {
    if (this.closedError) return;
    this.closedError = error;
    this.greetingWaiter?.(unavailable(`QMP: ${error.message}`));
    for (const waiter of this.pending.splice(0)) waiter.reject(unavailable(`QMP ${waiter.command}: ${error.message}`));
    this.emit('close');
  }
}

function openSocket(path: string, timeoutMs: number): Promise<Socket> {
  return new Promise((resolve, reject) => {
    const socket = connect(path);
    const timer = setTimeout(() => {
      socket.destroy();
      reject(unavailable(`cannot reach QMP at ${path}`, { context: { path } }));
    }, timeoutMs);
    socket.once('connect', () => {
      clearTimeout(timer);
      resolve(socket);
    });
    socket.once('error', (error) => {
      clearTimeout(timer);
      reject(unavailable(`cannot reach QMP at ${path}: ${error.message}`, { cause: error, context: { path } }));
    });
  });
}
