import dnsPacket from 'dns-packet';
import type { NetworkSection } from '../report/report-types.js';
import { Ipv4Reassembler } from './ip-fragments.js';
import { decodeFrame, type IpPacket, quotedDestination, readPcap, TCP_FLAGS } from './pcap.js';
import { ircCommands, looksLikeHttp, looksLikeSmtp, parseHttpRequests, printable, tlsServerName } from './protocols.js';

/**
 * One pass over a capture giving Cuckoo's network section (without pcap_sha256 and mitm, which the
 * module adds): hosts, DNS, TCP/UDP flows, ICMP, HTTP, TLS server names, SMTP, IRC and dead hosts.
 * Client-to-server TCP data is reassembled per connection, up to a bounded size, for the protocols.
 */

export interface AnalysisOptions {
  /** Addresses never listed as hosts: the machine itself and its gateway. */
  ignoreHosts?: readonly string[];
}

export type NetworkFacts = Omit<NetworkSection, 'mitm' | 'pcap_sha256'>;

export interface PcapAnalysis {
  facts: NetworkFacts;
  /** URLs of the HTTP requests sent to each `address|port`, so behaviour can tell which process fetched them. */
  urlsByDestination: Map<string, string[]>;
}

/** Client bytes kept per TCP connection, and for all connections together. */
const MAX_STREAM_BYTES = 1 << 20;
const MAX_TOTAL_STREAM_BYTES = 128 << 20;
const MAX_LISTED = 10000;

interface Flow {
  src: string;
  sport: number;
  dst: string;
  dport: number;
  offset: number;
  time: number;
}

/** One direction's data of a TCP connection, by position relative to its first byte. */
interface Stream {
  /** First byte's sequence number. */
  base: number | undefined;
  segments: Map<number, Buffer>;
  bytes: number;
}

interface Connection extends Flow, Stream {
  synSeen: boolean;
  synAckSeen: boolean;
  /** The server's data, kept only for DNS over TCP, whose answers come from the server. */
  replies: Stream | undefined;
}

const DNS_PORT = 53;

interface DnsQuery {
  request: string;
  type: string;
  answers: Array<{ type: string; data: string }>;
}

class Collector {
  firstTs: number | undefined;
  readonly hosts = new Set<string>();
  readonly tcp = new Map<string, Connection>();
  readonly udp = new Map<string, Flow>();
  readonly icmp: NetworkSection['icmp'] = [];
  readonly dns = new Map<string, DnsQuery>();
  readonly dnsServers = new Set<string>();
  readonly unreachable = new Map<string, [string, number]>();
  storedBytes = 0;

  constructor(private readonly ignore: Set<string>) {}

  add(packet: IpPacket, ts: number, offset: number): void {
    this.firstTs ??= ts;
    const time = ts - this.firstTs;
    if (packet.tcp) this.addTcp(packet, time, offset);
    else if (packet.udp) this.addUdp(packet, time, offset);
    else if (packet.icmp) this.addIcmp(packet);
  }

  private addHost(address: string): void {
    if (this.ignore.has(address) || isBroadcastOrMulticast(address) || this.hosts.size >= MAX_LISTED) return;
    this.hosts.add(address);
  }

  private addTcp(packet: IpPacket, time: number, offset: number): void {
    const segment = packet.tcp!;
    const forward = `${packet.src}|${segment.sport}|${packet.dst}|${segment.dport}`;
    const backward = `${packet.dst}|${segment.dport}|${packet.src}|${segment.sport}`;
    let connection = this.tcp.get(forward);
    let fromClient = true;
    if (!connection) {
      connection = this.tcp.get(backward);
      fromClient = false;
    }
    const syn = (segment.flags & TCP_FLAGS.SYN) !== 0;
    const ack = (segment.flags & TCP_FLAGS.ACK) !== 0;
    if (!connection) {
      // A SYN-ACK seen first means the client is the packet's destination.
      const reversed = syn && ack;
      if (this.tcp.size >= MAX_LISTED) return;
      connection = {
        src: reversed ? packet.dst : packet.src,
        sport: reversed ? segment.dport : segment.sport,
        dst: reversed ? packet.src : packet.dst,
        dport: reversed ? segment.sport : segment.dport,
        offset,
        time,
        synSeen: false,
        synAckSeen: false,
        base: undefined,
        segments: new Map(),
        bytes: 0,
        replies: undefined,
      };
      if (connection.dport === DNS_PORT) connection.replies = { base: undefined, segments: new Map(), bytes: 0 };
      this.tcp.set(reversed ? backward : forward, connection);
      fromClient = !reversed;
      this.addHost(connection.dst);
    }
    if (syn && !ack && fromClient) {
      connection.synSeen = true;
      connection.base = (segment.seq + 1) >>> 0;
    }
    if (syn && ack && !fromClient) {
      connection.synAckSeen = true;
      if (connection.replies) connection.replies.base = (segment.seq + 1) >>> 0;
    }
    if (segment.payload.length === 0) return;
    if (fromClient) this.storeData(connection, segment.seq, segment.payload);
    else if (connection.replies) this.storeData(connection.replies, segment.seq, segment.payload);
  }

  private storeData(stream: Stream, seq: number, payload: Buffer): void {
    stream.base ??= seq;
    const relative = (seq - stream.base) >>> 0;
    if (relative >= MAX_STREAM_BYTES || stream.bytes >= MAX_STREAM_BYTES || this.storedBytes >= MAX_TOTAL_STREAM_BYTES) return;
    const known = stream.segments.get(relative);
    if (known && known.length >= payload.length) return;
    const kept = Buffer.from(payload.subarray(0, MAX_STREAM_BYTES - relative));
    stream.segments.set(relative, kept);
    stream.bytes += kept.length - (known?.length ?? 0);
    this.storedBytes += kept.length - (known?.length ?? 0);
  }

  private addUdp(packet: IpPacket, time: number, offset: number): void {
    const datagram = packet.udp!;
    const forward = `${packet.src}|${datagram.sport}|${packet.dst}|${datagram.dport}`;
    const backward = `${packet.dst}|${datagram.dport}|${packet.src}|${datagram.sport}`;
    if (!this.udp.has(forward) && !this.udp.has(backward) && this.udp.size < MAX_LISTED) {
      this.udp.set(forward, { src: packet.src, sport: datagram.sport, dst: packet.dst, dport: datagram.dport, offset, time });
      this.addHost(packet.dst);
    }
    if (datagram.dport === DNS_PORT || datagram.sport === DNS_PORT) this.addDns(datagram.dport === DNS_PORT ? packet.dst : packet.src, datagram.payload);
  }

  /** A DNS message between the machine and `server`; false when the bytes are no DNS message. */
  addDns(server: string, payload: Buffer): boolean {
    let message: dnsPacket.Packet;
    try {
      message = dnsPacket.decode(payload);
    } catch {
      return false;
    }
    const response = message.type === 'response';
    if (!response) this.dnsServers.add(server);
    for (const question of message.questions ?? []) {
      const key = `${question.name.toLowerCase()}|${question.type}`;
      let query = this.dns.get(key);
      if (!query) {
        if (this.dns.size >= MAX_LISTED) continue;
        query = { request: question.name, type: question.type, answers: [] };
        this.dns.set(key, query);
      }
      if (!response) continue;
      for (const answer of message.answers ?? []) {
        const entry = { type: answer.type, data: answerText(answer) };
        if (!query.answers.some((known) => known.type === entry.type && known.data === entry.data)) query.answers.push(entry);
      }
    }
    return true;
  }

  private addIcmp(packet: IpPacket): void {
    const message = packet.icmp!;
    const unreachable = message.v6 ? message.type === 1 : message.type === 3;
    if (unreachable) {
      const quoted = quotedDestination(message);
      if (quoted && (quoted.protocol === 6 || quoted.protocol === 17)) {
        this.unreachable.set(`${quoted.dst}|${quoted.dport}`, [quoted.dst, quoted.dport]);
      }
    }
    const echoRequest = message.v6 ? message.type === 128 : message.type === 8;
    if (echoRequest) this.addHost(packet.dst);
    if (this.icmp.length < MAX_LISTED) this.icmp.push({ src: packet.src, dst: packet.dst, type: message.type, data: printable(message.payload) });
  }
}

function answerText(answer: dnsPacket.Answer): string {
  const data: unknown = (answer as { data?: unknown }).data;
  if (typeof data === 'string') return data;
  if (Buffer.isBuffer(data)) return printable(data);
  if (Array.isArray(data)) return data.map((part) => (Buffer.isBuffer(part) ? part.toString('latin1') : String(part))).join('');
  if (data && typeof data === 'object') {
    const record = data as Record<string, unknown>;
    if (answer.type === 'MX') return `${record.preference} ${record.exchange}`;
    if (answer.type === 'SRV') return `${record.priority} ${record.weight} ${record.port} ${record.target}`;
    if (answer.type === 'SOA') return `${record.mname} ${record.rname} ${record.serial}`;
    return JSON.stringify(record);
  }
  return String(data ?? '');
}

function isBroadcastOrMulticast(address: string): boolean {
  if (address.includes(':')) return address.toLowerCase().startsWith('ff');
  const first = Number(address.split('.')[0]);
  return address === '255.255.255.255' || address === '0.0.0.0' || (first >= 224 && first <= 239);
}

/** RFC 1918, shared (100.64/10) and link-local IPv4; unique-local and link-local IPv6. */
export function isPrivate(address: string): boolean {
  if (address.includes(':')) return /^(f[cd]|fe[89ab])/i.test(address);
  const [a = 0, b = 0] = address.split('.').map(Number);
  return a === 10 || (a === 172 && b >= 16 && b <= 31) || (a === 192 && b === 168) || (a === 100 && b >= 64 && b <= 127) || (a === 169 && b === 254);
}

/** A direction's bytes in sequence order, up to the first gap. */
function streamBytes(stream: Stream): Buffer {
  const parts: Buffer[] = [];
  let cursor = 0;
  for (const [relative, data] of [...stream.segments].sort((a, b) => a[0] - b[0])) {
    if (relative > cursor) break;
    if (relative + data.length <= cursor) continue;
    parts.push(data.subarray(cursor - relative));
    cursor = relative + data.length;
  }
  return Buffer.concat(parts);
}

export async function analysePcap(path: string, options: AnalysisOptions = {}): Promise<PcapAnalysis> {
  const collector = new Collector(new Set(options.ignoreHosts ?? []));
  const reassembler = new Ipv4Reassembler();
  for await (const record of readPcap(path)) {
    const packet = decodeFrame(record.linktype, record.data, reassembler);
    if (packet) collector.add(packet, record.ts, record.offset);
  }
  return summarise(collector);
}

function summarise(collector: Collector): PcapAnalysis {
  const urlsByDestination = new Map<string, string[]>();
  const dnsOverTcp = new Set<Connection>();
  for (const connection of collector.tcp.values()) if (addTcpDns(collector, connection)) dnsOverTcp.add(connection);
  // The machine's own resolver (its gateway, at a private address) is no host the sample contacted.
  const resolvers = new Set([...collector.dnsServers].filter(isPrivate));
  const facts: NetworkFacts = {
    hosts: [...collector.hosts].filter((host) => !resolvers.has(host)),
    domains: [],
    dns: [...collector.dns.values()],
    tcp: [...collector.tcp.values()].map(flowOf),
    udp: [...collector.udp.values()].map(flowOf),
    icmp: collector.icmp,
    http: [],
    tls: [],
    smtp: [],
    irc: [],
    dns_servers: [...collector.dnsServers],
    dead_hosts: [],
  };
  const domains = new Map<string, string>();
  for (const query of facts.dns) {
    const address = query.answers.find((answer) => answer.type === 'A' || answer.type === 'AAAA')?.data;
    if (!domains.has(query.request) || (!domains.get(query.request) && address)) domains.set(query.request, address ?? '');
  }
  facts.domains = [...domains].map(([domain, ip]) => ({ domain, ip }));
  const dead = new Map(collector.unreachable);
  for (const connection of collector.tcp.values()) {
    if (connection.synSeen && !connection.synAckSeen) dead.set(`${connection.dst}|${connection.dport}`, [connection.dst, connection.dport]);
    if (connection.segments.size === 0 || dnsOverTcp.has(connection)) continue;
    const urls = addApplicationData(facts, connection, streamBytes(connection));
    if (urls.length > 0) {
      const key = `${connection.dst}|${connection.dport}`;
      urlsByDestination.set(key, [...(urlsByDestination.get(key) ?? []), ...urls]);
    }
  }
  facts.dead_hosts = [...dead.values()];
  return { facts, urlsByDestination };
}

/**
 * The DNS messages of a connection to port 53: each message is preceded by its length in two bytes
 * (RFC 1035 4.2.2), queries from the client, answers from the server. True when the client's bytes are DNS.
 */
function addTcpDns(collector: Collector, connection: Connection): boolean {
  if (!connection.replies) return false;
  let dns = false;
  for (const message of lengthPrefixed(streamBytes(connection))) dns = collector.addDns(connection.dst, message) || dns;
  for (const message of lengthPrefixed(streamBytes(connection.replies))) collector.addDns(connection.dst, message);
  return dns;
}

function* lengthPrefixed(data: Buffer): Generator<Buffer> {
  for (let offset = 0; offset + 2 <= data.length; ) {
    const length = data.readUInt16BE(offset);
    if (length === 0 || offset + 2 + length > data.length) return;
    yield data.subarray(offset + 2, offset + 2 + length);
    offset += 2 + length;
  }
}

function flowOf(flow: Flow): Flow {
  return { src: flow.src, sport: flow.sport, dst: flow.dst, dport: flow.dport, offset: flow.offset, time: flow.time };
}

/** Adds what the client's stream holds; returns the URLs of its HTTP requests. */
function addApplicationData(facts: NetworkFacts, connection: Connection, data: Buffer): string[] {
  if (looksLikeHttp(data)) return parseHttpRequests(data).map((request) => addHttp(facts, connection, request));
  const sni = tlsServerName(data);
  if (sni !== undefined) {
    facts.tls.push({ dst: connection.dst, dport: connection.dport, sni });
  } else if (looksLikeSmtp(data)) {
    facts.smtp.push({ dst: connection.dst, raw: printable(data) });
  } else {
    for (const { command, params } of ircCommands(data)) facts.irc.push({ dst: connection.dst, command, params });
  }
  return [];
}

function addHttp(facts: NetworkFacts, connection: Connection, request: ReturnType<typeof parseHttpRequests>[number]): string {
  const hostHeader = request.headers.get('host');
  const host = hostHeader || connection.dst;
  const bracketed = host.includes(':') && !host.startsWith('[') && !hostHeader ? `[${host}]` : host;
  const hasPort = /:\d+$/.test(bracketed) && (!bracketed.includes('[') || bracketed.includes(']:'));
  const netloc = connection.dport !== 80 && !hasPort ? `${bracketed}:${connection.dport}` : bracketed;
  const absolute = /^[a-z][a-z0-9+.-]*:\/\//i.test(request.path);
  const entry = {
    count: 1,
    host,
    port: connection.dport,
    data: printable(request.raw),
    uri: absolute ? request.path : `http://${netloc}${request.path.startsWith('/') ? '' : '/'}${request.path}`,
    body: printable(request.body),
    path: request.path,
    'user-agent': request.headers.get('user-agent') ?? '',
    version: request.version,
    method: request.method,
  };
  const same = facts.http.find(
    (known) => known.host === entry.host && known.port === entry.port && known.method === entry.method && known.uri === entry.uri && known.body === entry.body,
  );
  if (same) same.count++;
  else if (facts.http.length < MAX_LISTED) facts.http.push(entry);
  return entry.uri;
}
