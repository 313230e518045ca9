/**
 * Small classic pcap files made by hand (little-endian, microsecond timestamps, Ethernet link type), for
 * tests and benchmarks that need a capture without running tcpdump. Checksums are left zero: nothing
 * that reads these files checks them.
 */

export interface TcpSegment {
  src: string;
  sport: number;
  dst: string;
  dport: number;
  /** TCP flags; PSH+ACK by default. */
  flags?: number;
  seq?: number;
  payload?: string | Buffer;
}

export const TCP_SYN = 0x02;
export const TCP_PSH_ACK = 0x18;

/** One IPv4/TCP packet per segment, one second apart from `firstSecond` on. */
export function ethernetTcpPcap(segments: TcpSegment[], firstSecond = 1_700_000_000): Buffer {
  return Buffer.concat([pcapHeader(), ...segments.map((segment, index) => pcapRecord(ethernetTcpFrame(segment), firstSecond + index))]);
}

function pcapHeader(): Buffer {
  const header = Buffer.alloc(24);
  header.writeUInt32LE(0xa1b2c3d4, 0);
  header.writeUInt16LE(2, 4);
  header.writeUInt16LE(4, 6);
  header.writeUInt32LE(65535, 16);
  header.writeUInt32LE(1, 20); // LINKTYPE_ETHERNET
  return header;
}

function pcapRecord(frame: Buffer, seconds: number): Buffer {
  const header = Buffer.alloc(16);
  header.writeUInt32LE(seconds, 0);
  header.writeUInt32LE(frame.length, 8);
  header.writeUInt32LE(frame.length, 12);
  return Buffer.concat([header, frame]);
}

function ethernetTcpFrame(segment: TcpSegment): Buffer {
  const payload = Buffer.from(segment.payload ?? '');
  const ethernet = Buffer.from('0200000000010200000000020800', 'hex');
  const ip = Buffer.alloc(20);
  ip[0] = 0x45;
  ip.writeUInt16BE(20 + 20 + payload.length, 2);
  ip[8] = 64;
  ip[9] = 6;
  ipv4Bytes(segment.src).copy(ip, 12);
  ipv4Bytes(segment.dst).copy(ip, 16);
  const tcp = Buffer.alloc(20);
  tcp.writeUInt16BE(segment.sport, 0);
  tcp.writeUInt16BE(segment.dport, 2);
  tcp.writeUInt32BE(segment.seq ?? 0, 4);
  tcp[12] = 5 << 4;
  tcp[13] = segment.flags ?? TCP_PSH_ACK;
  return Buffer.concat([ethernet, ip, tcp, payload]);
}

function ipv4Bytes(address: string): Buffer {
  return Buffer.from(address.split('.').map(Number));
}
