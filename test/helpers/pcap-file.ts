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
  return ethernetIpv4Pcap(segments.map((segment) => whole(tcpDatagram(segment))), firstSecond);
}

/** An IPv4 datagram before fragmentation: addresses, protocol, identification and the transport bytes. */
export interface Ipv4Datagram {
  src: string;
  dst: string;
  protocol: number;
  id: number;
  payload: Buffer;
}

/** One IPv4 packet on the wire: a whole datagram or one fragment of it. */
export interface Ipv4Packet extends Ipv4Datagram {
  /** Where this fragment's payload starts in the datagram's, in bytes (a multiple of 8). */
  offset: number;
  moreFragments: boolean;
}

export function tcpDatagram(segment: TcpSegment, id = 0): Ipv4Datagram {
  const payload = Buffer.from(segment.payload ?? '');
  const tcp = Buffer.alloc(20);
  tcp.writeUInt16BE(segment.sport, 0);
  tcp.writeUInt16BE(segment.dport, 2);
  tcp.writeUInt32BE(segment.seq ?? 0, 4);
  tcp[12] = 5 << 4;
  tcp[13] = segment.flags ?? TCP_PSH_ACK;
  return { src: segment.src, dst: segment.dst, protocol: 6, id, payload: Buffer.concat([tcp, payload]) };
}

export function udpDatagram(flow: { src: string; sport: number; dst: string; dport: number }, payload: Buffer, id = 0): Ipv4Datagram {
  const udp = Buffer.alloc(8);
  udp.writeUInt16BE(flow.sport, 0);
  udp.writeUInt16BE(flow.dport, 2);
  udp.writeUInt16BE(8 + payload.length, 4);
  return { src: flow.src, dst: flow.dst, protocol: 17, id, payload: Buffer.concat([udp, payload]) };
}

export function whole(datagram: Ipv4Datagram): Ipv4Packet {
  return { ...datagram, offset: 0, moreFragments: false };
}

/** The datagram cut into fragments of at most `size` payload bytes (rounded down to a multiple of 8). */
export function fragments(datagram: Ipv4Datagram, size: number): Ipv4Packet[] {
  const step = size - (size % 8);
  const packets: Ipv4Packet[] = [];
  for (let offset = 0; offset < datagram.payload.length; offset += step) {
    const payload = datagram.payload.subarray(offset, offset + step);
    packets.push({ ...datagram, payload, offset, moreFragments: offset + step < datagram.payload.length });
  }
  return packets;
}

/** One packet per record, one second apart from `firstSecond` on. */
export function ethernetIpv4Pcap(packets: Ipv4Packet[], firstSecond = 1_700_000_000): Buffer {
  return Buffer.concat([pcapHeader(), ...packets.map((packet, index) => pcapRecord(ethernetFrame(packet), firstSecond + index))]);
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

function ethernetFrame(packet: Ipv4Packet): Buffer {
  const ethernet = Buffer.from('0200000000010200000000020800', 'hex');
  const ip = Buffer.alloc(20);
  ip[0] = 0x45;
  ip.writeUInt16BE(20 + packet.payload.length, 2);
  ip.writeUInt16BE(packet.id, 4);
  ip.writeUInt16BE((packet.moreFragments ? 0x2000 : 0) | (packet.offset / 8), 6);
  ip[8] = 64;
  ip[9] = packet.protocol;
  ipv4Bytes(packet.src).copy(ip, 12);
  ipv4Bytes(packet.dst).copy(ip, 16);
  return Buffer.concat([ethernet, ip, packet.payload]);
}

function ipv4Bytes(address: string): Buffer {
  return Buffer.from(address.split('.').map(Number));
}
