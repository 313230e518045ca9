import { decodeSockaddr } from './sockaddr.js';
import type { SocketAddress, TraceRecord } from './trace-records.js';

/** The monitor's answers to its commands (see native/monitor/monitor.c). */
export type MonitorControl =
  | { ctl: 'ready' }
  | { ctl: 'armed'; cgroup: string }
  | { ctl: 'disarmed'; lost: number; confirmed: boolean }
  | { ctl: 'error'; message: string };

const AF_UNIX = 1;

/**
 * One JSON line of the monitor's: a control line (its standard output), or a trace record (the qemu
 * guest's stream) in the TraceRecord shape but for two fields it leaves raw: socket addresses (the
 * sockaddr's bytes in hex, decoded here) and mapping addresses (hex, made a bigint). Null for a line
 * that is no JSON.
 */
export function parseMonitorLine(line: string): MonitorControl | TraceRecord | null {
  const value = parsed(line);
  if (!value) return null;
  return 'ctl' in value ? (value as unknown as MonitorControl) : recordOf(value);
}

/** A record the monitor wrote as JSON in a frame (see monitor-frames.ts): no time and thread yet. */
export function recordOfJson(text: string): TraceRecord | null {
  const value = parsed(text);
  return value && recordOf(value);
}

function parsed(text: string): Record<string, unknown> | null {
  try {
    return JSON.parse(text) as Record<string, unknown>;
  } catch {
    return null;
  }
}

function recordOf(value: Record<string, unknown>): TraceRecord {
  switch (value.op) {
    case 'connect':
    case 'bind':
    case 'send':
    case 'recv':
      value.address = addressOf(value.address);
      break;
    case 'exec_map':
      value.address = BigInt(`0x${String(value.address)}`);
      break;
  }
  return value as unknown as TraceRecord;
}

function addressOf(hex: unknown): SocketAddress | null {
  if (typeof hex !== 'string' || hex === '') return null;
  const bytes = Buffer.from(hex, 'hex');
  return decodeSockaddr(bytes, unixPathOf(bytes));
}

/** A unix socket's path (not an abstract name, which starts with a NUL): up to its NUL. */
function unixPathOf(bytes: Buffer): string {
  if (bytes.length < 3 || bytes.readUInt16LE(0) !== AF_UNIX || bytes[2] === 0) return '';
  const path = bytes.subarray(2);
  const end = path.indexOf(0);
  return path.subarray(0, end < 0 ? path.length : end).toString('utf8');
}
