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
 * One line of the monitor's output: a control line, or a trace record. The monitor writes records in
 * the TraceRecord shape but for two fields it leaves raw: socket addresses (the sockaddr's bytes in
 * hex, decoded here) and mapping addresses (hex, made a bigint). Null for a line that is no JSON.
 */
export function parseMonitorLine(line: string): MonitorControl | TraceRecord | null {
  let value: Record<string, unknown>;
  try {
    value = JSON.parse(line) as Record<string, unknown>;
  } catch {
    return null;
  }
  if ('ctl' in value) return value as unknown as MonitorControl;
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
