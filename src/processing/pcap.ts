import { open } from 'node:fs/promises';
import { invalidInput } from '../errors.js';
import { type Ipv4Reassembler, isFragment } from './ip-fragments.js';

/**
 * Packet captures: libpcap files (micro- or nanosecond, either byte order) and pcapng, read as a
 * stream of records, and their packets decoded down to TCP, UDP and ICMP over IPv4 and IPv6, from
 * Ethernet (with VLAN tags), Linux cooked capture v1 and v2, raw IP and BSD loopback links.
 */

export interface PcapRecord {
  /** Seconds since the epoch. */
  ts: number;
  /** Where the record starts in the file. */
  offset: number;
  linktype: number;
  data: Buffer;
}

export const LINKTYPE = { NULL: 0, ETHERNET: 1, RAW: 101, LINUX_SLL: 113, IPV4: 228, IPV6: 229, LINUX_SLL2: 276 } as const;

const MAX_RECORD = 256 * 1024;
const READ_SIZE = 1 << 20;

/** Buffered sequential reads with a file position, so records can cross read boundaries. */
class StreamBuffer {
  private buffer = Buffer.alloc(0);
  private start = 0;
  private eof = false;
  position = 0;

  constructor(private readonly read: (size: number) => Promise<Buffer>) {}

  /** The next `size` bytes without consuming them; shorter only at end of file. */
  async peek(size: number): Promise<Buffer> {
    while (this.buffer.length - this.start < size && !this.eof) {
      const more = await this.read(Math.max(READ_SIZE, size));
      if (more.length === 0) this.eof = true;
      this.buffer = Buffer.concat([this.buffer.subarray(this.start), more]);
      this.start = 0;
    }
    return this.buffer.subarray(this.start, this.start + size);
  }

  skip(size: number): void {
    this.start += size;
    this.position += size;
  }

  async take(size: number): Promise<Buffer> {
    const data = Buffer.from(await this.peek(size));
    this.skip(data.length);
    return data;
  }
}

export async function* readPcap(path: string): AsyncGenerator<PcapRecord> {
  const handle = await open(path, 'r');
  try {
    const stream = new StreamBuffer(async (size) => {
      const buffer = Buffer.alloc(size);
      const { bytesRead } = await handle.read(buffer, 0, size, null);
      return buffer.subarray(0, bytesRead);
    });
    const magic = await stream.peek(4);
    if (magic.length < 4) return;
    if (magic.readUInt32LE(0) === 0x0a0d0d0a) yield* readPcapng(stream, path);
    else yield* readLibpcap(stream, path);
  } finally {
    await handle.close();
  }
}

async function* readLibpcap(stream: StreamBuffer, path: string): AsyncGenerator<PcapRecord> {
  const header = await stream.take(24);
  if (header.length < 24) return;
  const magicLE = header.readUInt32LE(0);
  const magicBE = header.readUInt32BE(0);
  const little = magicLE === 0xa1b2c3d4 || magicLE === 0xa1b23c4d;
  if (!little && magicBE !== 0xa1b2c3d4 && magicBE !== 0xa1b23c4d) {
    throw invalidInput('not a pcap file', { context: { path, magic: header.subarray(0, 4).toString('hex') } });
  }
  const nano = (little ? magicLE : magicBE) === 0xa1b23c4d;
  const u32 = (b: Buffer, o: number) => (little ? b.readUInt32LE(o) : b.readUInt32BE(o));
  const linktype = u32(header, 20) & 0xffff;
  for (;;) {
    const offset = stream.position;
    const record = await stream.take(16);
    if (record.length < 16) return;
    const length = u32(record, 8);
    // A record claiming more than any snap length means the file is corrupt from here on.
    if (length > MAX_RECORD) return;
    const data = await stream.take(length);
    if (data.length < length) return;
    yield { ts: u32(record, 0) + u32(record, 4) / (nano ? 1e9 : 1e6), offset, linktype, data };
  }
}

async function* readPcapng(stream: StreamBuffer, path: string): AsyncGenerator<PcapRecord> {
  let little = true;
  let interfaces: Array<{ linktype: number; unitsPerSecond: number }> = [];
  for (;;) {
    const offset = stream.position;
    const head = await stream.peek(12);
    if (head.length < 12) return;
    const type = head.readUInt32LE(0);
    if (type === 0x0a0d0d0a) {
      little = head.readUInt32LE(8) === 0x1a2b3c4d;
      if (!little && head.readUInt32BE(8) !== 0x1a2b3c4d) throw invalidInput('corrupt pcapng section header', { context: { path, offset } });
      interfaces = [];
    }
    const u32 = (b: Buffer, o: number) => (little ? b.readUInt32LE(o) : b.readUInt32BE(o));
    const length = u32(head, 4);
    if (length < 12 || length > MAX_RECORD + 64 || length % 4 !== 0) return;
    const block = await stream.take(length);
    if (block.length < length) return;
    const blockType = u32(block, 0);
    if (blockType === 1) {
      interfaces.push({ linktype: (little ? block.readUInt16LE(8) : block.readUInt16BE(8)), unitsPerSecond: timestampResolution(block, little) });
    } else if (blockType === 6 && length >= 32) {
      const iface = interfaces[u32(block, 8)];
      if (!iface) continue;
      const ticks = u32(block, 12) * 2 ** 32 + u32(block, 16);
      const captured = Math.min(u32(block, 20), length - 32);
      yield { ts: ticks / iface.unitsPerSecond, offset, linktype: iface.linktype, data: block.subarray(28, 28 + captured) };
    } else if (blockType === 3 && length >= 16 && interfaces[0]) {
      const captured = Math.min(u32(block, 8), length - 16);
      yield { ts: 0, offset, linktype: interfaces[0].linktype, data: block.subarray(12, 12 + captured) };
    }
  }
}

/** The if_tsresol option of an interface description block (default: microseconds). */
function timestampResolution(block: Buffer, little: boolean): number {
  for (let o = 16; o + 4 <= block.length - 4; ) {
    const code = little ? block.readUInt16LE(o) : block.readUInt16BE(o);
    const length = little ? block.readUInt16LE(o + 2) : block.readUInt16BE(o + 2);
    if (code === 0) break;
    if (code === 9 && length >= 1) {
      const value = block[o + 4]!;
      return value & 0x80 ? 2 ** (value & 0x7f) : 10 ** value;
    }
    o += 4 + ((length + 3) & ~3);
  }
  return 1e6;
}

export interface TcpSegment {
  sport: number;
  dport: number;
  seq: number;
  ack: number;
  flags: number;
  payload: Buffer;
}

export interface UdpDatagram {
  sport: number;
  dport: number;
  payload: Buffer;
}

export interface IcmpMessage {
  type: number;
  code: number;
  /** The message after its 8-byte header (echo data, or the quoted packet of an error). */
  payload: Buffer;
  v6: boolean;
}

export interface IpPacket {
  version: 4 | 6;
  src: string;
  dst: string;
  protocol: number;
  /** True for the second and later fragments of a fragmented datagram, which carry no transport header. */
  laterFragment: boolean;
  /** True for a fragment given to a reassembler: its transport comes with the datagram it completes. */
  fragment?: boolean;
  tcp?: TcpSegment;
  udp?: UdpDatagram;
  icmp?: IcmpMessage;
}

export const TCP_FLAGS = { FIN: 0x01, SYN: 0x02, RST: 0x04, PSH: 0x08, ACK: 0x10 } as const;

/**
 * Decodes a captured frame down to its IP packet, or undefined for anything that is not IP. With a
 * reassembler, IPv4 fragments are gathered and the fragment completing a datagram gives the whole of it.
 */
export function decodeFrame(linktype: number, frame: Buffer, reassembler?: Ipv4Reassembler): IpPacket | undefined {
  const located = locateIp(linktype, frame);
  if (!located) return undefined;
  const ip = frame.subarray(located);
  if (ip.length < 1) return undefined;
  const version = ip[0]! >> 4;
  if (version === 4) return decodeIpv4(ip, reassembler);
  if (version === 6) return decodeIpv6(ip);
  return undefined;
}

function locateIp(linktype: number, frame: Buffer): number | undefined {
  switch (linktype) {
    case LINKTYPE.ETHERNET: {
      let offset = 12;
      let ethertype = frame.length >= 14 ? frame.readUInt16BE(12) : 0;
      while ((ethertype === 0x8100 || ethertype === 0x88a8) && frame.length >= offset + 6) {
        offset += 4;
        ethertype = frame.readUInt16BE(offset);
      }
      return ethertype === 0x0800 || ethertype === 0x86dd ? offset + 2 : undefined;
    }
    case LINKTYPE.LINUX_SLL:
      return frame.length >= 16 && [0x0800, 0x86dd].includes(frame.readUInt16BE(14)) ? 16 : undefined;
    case LINKTYPE.LINUX_SLL2:
      return frame.length >= 20 && [0x0800, 0x86dd].includes(frame.readUInt16BE(0)) ? 20 : undefined;
    case LINKTYPE.NULL:
      return frame.length >= 4 ? 4 : undefined;
    case LINKTYPE.RAW:
    case LINKTYPE.IPV4:
    case LINKTYPE.IPV6:
    case 12:
      return 0;
    default:
      return undefined;
  }
}

function decodeIpv4(ip: Buffer, reassembler?: Ipv4Reassembler): IpPacket | undefined {
  if (ip.length < 20) return undefined;
  const headerLength = (ip[0]! & 0x0f) * 4;
  const total = Math.min(ip.readUInt16BE(2) || ip.length, ip.length);
  if (headerLength < 20 || total < headerLength) return undefined;
  if (reassembler && isFragment(ip)) {
    const whole = reassembler.add(ip.subarray(0, total));
    if (whole) return decodeIpv4(whole);
    return { version: 4, src: ipv4(ip, 12), dst: ipv4(ip, 16), protocol: ip[9]!, laterFragment: (ip.readUInt16BE(6) & 0x1fff) !== 0, fragment: true };
  }
  const fragment = ip.readUInt16BE(6);
  const packet: IpPacket = {
    version: 4,
    src: ipv4(ip, 12),
    dst: ipv4(ip, 16),
    protocol: ip[9]!,
    laterFragment: (fragment & 0x1fff) !== 0,
  };
  if (!packet.laterFragment) decodeTransport(packet, ip.subarray(headerLength, total));
  return packet;
}

const IPV6_EXTENSIONS = new Set([0, 43, 60, 51, 44]);

function decodeIpv6(ip: Buffer): IpPacket | undefined {
  if (ip.length < 40) return undefined;
  const end = Math.min(40 + ip.readUInt16BE(4), ip.length);
  let next = ip[6]!;
  let offset = 40;
  let laterFragment = false;
  while (IPV6_EXTENSIONS.has(next) && offset + 8 <= end) {
    const header = next;
    next = ip[offset]!;
    if (header === 44) {
      laterFragment = (ip.readUInt16BE(offset + 2) & 0xfff8) !== 0;
      offset += 8;
    } else if (header === 51) {
      offset += (ip[offset + 1]! + 2) * 4;
    } else {
      offset += (ip[offset + 1]! + 1) * 8;
    }
  }
  const packet: IpPacket = { version: 6, src: ipv6(ip, 8), dst: ipv6(ip, 24), protocol: next, laterFragment };
  if (!laterFragment && offset <= end) decodeTransport(packet, ip.subarray(offset, end));
  return packet;
}

function decodeTransport(packet: IpPacket, data: Buffer): void {
  if (packet.protocol === 6 && data.length >= 20) {
    const offset = (data[12]! >> 4) * 4;
    packet.tcp = {
      sport: data.readUInt16BE(0),
      dport: data.readUInt16BE(2),
      seq: data.readUInt32BE(4),
      ack: data.readUInt32BE(8),
      flags: data[13]!,
      payload: offset >= 20 && offset <= data.length ? data.subarray(offset) : Buffer.alloc(0),
    };
  } else if (packet.protocol === 17 && data.length >= 8) {
    const length = data.readUInt16BE(4);
    packet.udp = {
      sport: data.readUInt16BE(0),
      dport: data.readUInt16BE(2),
      payload: data.subarray(8, length >= 8 ? Math.min(length, data.length) : data.length),
    };
  } else if ((packet.protocol === 1 || packet.protocol === 58) && data.length >= 4) {
    packet.icmp = { type: data[0]!, code: data[1]!, payload: data.subarray(Math.min(8, data.length)), v6: packet.protocol === 58 };
  }
}

function ipv4(data: Buffer, offset: number): string {
  return `${data[offset]}.${data[offset + 1]}.${data[offset + 2]}.${data[offset + 3]}`;
}

/** RFC 5952 text: lowercase, leading zeros dropped, the longest run of two or more zero groups as "::". */
export function ipv6(data: Buffer, offset: number): string {
  const groups = Array.from({ length: 8 }, (_, i) => data.readUInt16BE(offset + i * 2));
  let bestStart = -1;
  let bestLength = 0;
  for (let i = 0; i < 8; ) {
    if (groups[i] !== 0) {
      i++;
      continue;
    }
    let j = i;
    while (j < 8 && groups[j] === 0) j++;
    if (j - i > bestLength && j - i >= 2) {
      bestStart = i;
      bestLength = j - i;
    }
    i = j;
  }
  const text = (list: number[]) => list.map((group) => group.toString(16)).join(':');
  if (bestStart < 0) return text(groups);
  return `${text(groups.slice(0, bestStart))}::${text(groups.slice(bestStart + bestLength))}`;
}

/** Decodes the IP header quoted in an ICMP error: where the failed packet was going. */
export function quotedDestination(icmp: IcmpMessage): { dst: string; protocol: number; dport: number } | undefined {
  const inner = icmp.v6 ? decodeIpv6Quoted(icmp.payload) : decodeIpv4Quoted(icmp.payload);
  return inner;
}

function decodeIpv4Quoted(data: Buffer) {
  if (data.length < 28 || data[0]! >> 4 !== 4) return undefined;
  const headerLength = (data[0]! & 0x0f) * 4;
  if (data.length < headerLength + 4) return undefined;
  return { dst: ipv4(data, 16), protocol: data[9]!, dport: data.readUInt16BE(headerLength + 2) };
}

function decodeIpv6Quoted(data: Buffer) {
  if (data.length < 44 || data[0]! >> 4 !== 6) return undefined;
  return { dst: ipv6(data, 24), protocol: data[6]!, dport: data.readUInt16BE(42) };
}
