import dgram from 'node:dgram';
import type net from 'node:net';
import * as dnsPacket from 'dns-packet';
import { fakeAddressFor } from './fake-addresses.js';
import type { ServiceHandle } from './service.js';

/**
 * The fake resolver: every name exists. A queries get the name's fake address, MX/NS/CNAME-style
 * queries get a plausible host under the asked name, AAAA gets an empty answer (the machine has no IPv6),
 * and nothing is ever NXDOMAIN, because a sample that cannot resolve its server does not show what it
 * would do next.
 */
const TTL = 300;
const MAX_TCP_MESSAGE = 65535 + 2;

export function answerQuery(query: Buffer): Buffer | null {
  let request: dnsPacket.DecodedPacket;
  try {
    request = dnsPacket.decode(query);
  } catch {
    return null;
  }
  if (request.type === 'response') return null;
  const questions = request.questions ?? [];
  const answers: dnsPacket.Answer[] = [];
  const additionals: dnsPacket.Answer[] = [];
  for (const question of questions) answerQuestion(question, answers, additionals);
  return dnsPacket.encode({
    type: 'response',
    id: request.id ?? 0,
    flags: dnsPacket.AUTHORITATIVE_ANSWER | dnsPacket.RECURSION_AVAILABLE | ((request.flags ?? 0) & dnsPacket.RECURSION_DESIRED),
    questions,
    answers,
    additionals,
  });
}

function answerQuestion(question: dnsPacket.Question, answers: dnsPacket.Answer[], additionals: dnsPacket.Answer[]): void {
  const name = question.name;
  const address = (host: string): dnsPacket.Answer => ({ type: 'A', name: host, ttl: TTL, data: fakeAddressFor(host) });
  switch (question.type) {
    case 'A':
    case 'ANY' as dnsPacket.RecordType:
      answers.push(address(name));
      return;
    case 'MX': {
      const exchange = `mail.${name}`;
      answers.push({ type: 'MX', name, ttl: TTL, data: { preference: 10, exchange } });
      additionals.push(address(exchange));
      return;
    }
    case 'NS': {
      const server = `ns1.${name}`;
      answers.push({ type: 'NS', name, ttl: TTL, data: server });
      additionals.push(address(server));
      return;
    }
    case 'TXT':
      answers.push({ type: 'TXT', name, ttl: TTL, data: ['v=spf1 -all'] });
      return;
    case 'PTR':
      answers.push({ type: 'PTR', name, ttl: TTL, data: `host-${reverseLabel(name)}.example.net` });
      return;
    case 'SOA':
      answers.push({ type: 'SOA', name, ttl: TTL, data: { mname: `ns1.${name}`, rname: `hostmaster.${name}`, serial: 1 } });
      return;
    default:
      // AAAA and everything else: the name exists but has no such record (NOERROR, no answer).
      return;
  }
}

function reverseLabel(name: string): string {
  const match = /^(\d+)\.(\d+)\.(\d+)\.(\d+)\.in-addr\.arpa\.?$/i.exec(name);
  return match ? [match[4], match[3], match[2], match[1]].join('-') : 'unknown';
}

export function startDnsUdp(host: string, port: number): Promise<ServiceHandle> {
  const socket = dgram.createSocket('udp4');
  socket.on('message', (query, peer) => {
    const reply = answerQuery(query);
    if (reply) socket.send(reply, peer.port, peer.address);
  });
  socket.on('error', () => undefined);
  return new Promise((resolve, reject) => {
    socket.once('error', reject);
    socket.bind(port, host, () => {
      socket.off('error', reject);
      resolve({ name: 'dns/udp', port, close: () => socket.close() });
    });
  });
}

/** DNS over TCP: each message is preceded by its two-byte length (RFC 1035 4.2.2). */
export function serveDnsTcp(socket: net.Socket): void {
  let pending = Buffer.alloc(0);
  socket.on('data', (chunk: Buffer) => {
    pending = Buffer.concat([pending, chunk]);
    if (pending.length > MAX_TCP_MESSAGE * 4) return socket.destroy();
    while (pending.length >= 2 && pending.length >= 2 + pending.readUInt16BE(0)) {
      const length = pending.readUInt16BE(0);
      const reply = answerQuery(pending.subarray(2, 2 + length));
      pending = pending.subarray(2 + length);
      if (!reply) return socket.destroy();
      const framed = Buffer.alloc(2 + reply.length);
      framed.writeUInt16BE(reply.length, 0);
      reply.copy(framed, 2);
      socket.write(framed);
    }
  });
}
