import assert from 'node:assert/strict';
import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { promisify } from 'node:util';
import dnsPacket from 'dns-packet';
import { analysePcap } from '../../src/processing/network-analysis.js';
import { startCapture, stopCapture } from '../helpers/capture.js';
import { ethernetIpv4Pcap, fragments, type Ipv4Packet, TCP_SYN, tcpDatagram, udpDatagram, whole } from '../helpers/pcap-file.js';

/**
 * IPv4 fragment reassembly and DNS over TCP, compared with what tshark decodes from the same files (tshark
 * reassembles fragments and TCP DNS itself): first on a real capture, made by tcpdump in a network namespace
 * of the test's own whose loopback has a 576-byte MTU, where dig asks a small DNS server over UDP (the kernel
 * fragments the 2 KB answer) and over TCP; then on captures written by hand (test/helpers/pcap-file.ts) for
 * what the kernel will not produce on demand (fragmented TCP, fragments out of order, a lost fragment).
 * Hand-written files hold documentation or private addresses and are only read: nothing is sent anywhere.
 */

const run = promisify(execFile);
const tshark = async (file: string, args: string[]) =>
  (await run('tshark', ['-n', '-r', file, ...args], { maxBuffer: 8 << 20, env: { ...process.env, LC_ALL: 'C' } })).stdout
    .split('\n')
    .filter((line) => line.length > 0);

const MACHINE = '10.200.0.2';
const RESOLVER = '10.200.0.1';
const SYN_ACK = 0x12;
const ACK = 0x10;

/** 120 A records: an answer of about 2 KB, more than one 576-byte fragment can carry. */
function bigAnswer(name: string, id: number): { query: Buffer; answer: Buffer; addresses: string[] } {
  const question = { type: 'A' as const, name };
  const addresses = Array.from({ length: 120 }, (_, index) => `192.0.2.${index + 1}`);
  const query = dnsPacket.encode({ type: 'query', id, flags: dnsPacket.RECURSION_DESIRED, questions: [question] });
  const answer = dnsPacket.encode({
    type: 'response',
    id,
    flags: dnsPacket.RECURSION_DESIRED,
    questions: [question],
    answers: addresses.map((data) => ({ type: 'A' as const, name, ttl: 60, data })),
  });
  return { query, answer, addresses };
}

const lengthPrefixed = (message: Buffer) => Buffer.concat([Buffer.from([message.length >> 8, message.length & 0xff]), message]);

/**
 * A DNS server on 127.0.0.1:53 of the namespace it runs in: every UDP query gets UDP_ANSWER and every TCP
 * query TCP_ANSWER (responses encoded for one name each), with the query's id.
 */
const RESPONDER = `
import dgram from 'node:dgram';
import net from 'node:net';
const reply = (answer, query) => { const message = Buffer.from(answer, 'hex'); query.copy(message, 0, 0, 2); return message; };
const udp = dgram.createSocket('udp4');
udp.on('message', (query, peer) => udp.send(reply(process.env.UDP_ANSWER, query), peer.port, peer.address));
udp.bind(53, '127.0.0.1');
net.createServer((socket) => {
  let buffered = Buffer.alloc(0);
  socket.on('data', (data) => {
    buffered = Buffer.concat([buffered, data]);
    if (buffered.length < 2 || buffered.length < 2 + buffered.readUInt16BE(0)) return;
    const message = reply(process.env.TCP_ANSWER, buffered.subarray(2));
    const length = Buffer.alloc(2);
    length.writeUInt16BE(message.length);
    socket.end(Buffer.concat([length, message]));
  });
  socket.on('error', () => undefined);
}).listen(53, '127.0.0.1', () => console.log('ready'));
`;

describe('IPv4 fragments and DNS over TCP in a real capture', () => {
  const namespace = `nestbox-frag-${randomBytes(4).toString('hex')}`;
  const inNamespace = (argv: string[]) => ['ip', 'netns', 'exec', namespace, ...argv];
  let dir: string;
  let responder: ChildProcess | undefined;
  let capture: string;
  let addresses: string[];

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'nestbox-fragments-real-'));
    await run('ip', ['netns', 'add', namespace]);
    await run('ip', ['netns', 'exec', namespace, 'ip', 'link', 'set', 'lo', 'mtu', '576', 'up']);
    const udp = bigAnswer('udp.example.test', 0);
    const tcp = bigAnswer('tcp.example.test', 0);
    addresses = udp.addresses;
    const argv = inNamespace([process.execPath, '--input-type=module', '-e', RESPONDER]);
    const env = { ...process.env, UDP_ANSWER: udp.answer.toString('hex'), TCP_ANSWER: tcp.answer.toString('hex') };
    responder = spawn(argv[0]!, argv.slice(1), { env, stdio: ['ignore', 'pipe', 'inherit'] });
    await new Promise<void>((resolve) => responder!.stdout!.once('data', () => resolve()));
    capture = join(dir, 'dns.pcap');
    const tcpdump = await startCapture(capture, { iface: 'lo', namespace });
    try {
      const dig = (name: string, transport: string) => {
        const command = inNamespace(['dig', '@127.0.0.1', name, 'A', '+tries=1', '+time=3', '+bufsize=4096', transport]);
        return run(command[0]!, command.slice(1));
      };
      await dig('udp.example.test', '+notcp');
      await dig('tcp.example.test', '+tcp');
    } finally {
      await new Promise((resolve) => setTimeout(resolve, 300));
      await stopCapture(tcpdump);
    }
  });

  after(async () => {
    responder?.kill();
    await run('ip', ['netns', 'del', namespace]).catch(() => undefined);
    rmSync(dir, { recursive: true, force: true });
  });

  it('the kernel fragmented the UDP answer, and both answers read as tshark reads them', async () => {
    const fragmentsSeen = await tshark(capture, ['-o', 'ip.defragment:FALSE', '-Y', 'ip.flags.mf == 1', '-T', 'fields', '-e', 'frame.number']);
    assert.ok(fragmentsSeen.length >= 2, `${fragmentsSeen.length} fragments with more to come`);
    const expected = await tshark(capture, ['-Y', 'dns.flags.response == 1', '-T', 'fields', '-e', 'dns.qry.name', '-e', 'dns.a']);
    assert.deepEqual(expected, [`udp.example.test\t${addresses.join(',')}`, `tcp.example.test\t${addresses.join(',')}`]);
    const { facts } = await analysePcap(capture);
    const answers = addresses.map((data) => ({ type: 'A', data }));
    assert.deepEqual(facts.dns, [
      { request: 'udp.example.test', type: 'A', answers },
      { request: 'tcp.example.test', type: 'A', answers },
    ]);
    assert.deepEqual(facts.tcp.map((flow) => flow.dport), [53]);
    assert.deepEqual(facts.irc, []);
  });
});

describe('IPv4 fragments and DNS over TCP in captures written by hand', () => {
  let dir: string;
  before(() => {
    dir = mkdtempSync(join(tmpdir(), 'nestbox-fragments-'));
  });
  after(() => rmSync(dir, { recursive: true, force: true }));

  const write = (name: string, packets: Ipv4Packet[]) => {
    const file = join(dir, name);
    writeFileSync(file, ethernetIpv4Pcap(packets));
    return file;
  };
  /** name -> addresses of every DNS answer tshark finds. */
  const tsharkAnswers = async (file: string, extra: string[] = []) => {
    const lines = await tshark(file, [...extra, '-Y', 'dns.flags.response == 1', '-T', 'fields', '-e', 'dns.qry.name', '-e', 'dns.a']);
    return lines.map((line) => {
      const [name, addresses] = line.split('\t');
      return { name, addresses: (addresses ?? '').split(',').filter(Boolean) };
    });
  };

  it('reads a DNS answer sent over UDP in fragments, delivered out of order, as tshark does', async () => {
    const { query, answer, addresses } = bigAnswer('fragmented.example.test', 0x1234);
    const answerFragments = fragments(udpDatagram({ src: RESOLVER, sport: 53, dst: MACHINE, dport: 40000 }, answer, 77), 576);
    assert.ok(answerFragments.length >= 3, `${answerFragments.length} fragments`);
    const file = write('udp-fragments.pcap', [
      whole(udpDatagram({ src: MACHINE, sport: 40000, dst: RESOLVER, dport: 53 }, query, 76)),
      answerFragments[1]!,
      answerFragments[0]!,
      ...answerFragments.slice(2),
    ]);
    const { facts } = await analysePcap(file);
    const expected = await tsharkAnswers(file);
    assert.deepEqual(expected, [{ name: 'fragmented.example.test', addresses }], 'tshark reassembles the answer');
    assert.deepEqual(facts.dns, [{ request: 'fragmented.example.test', type: 'A', answers: addresses.map((data) => ({ type: 'A', data })) }]);
    assert.deepEqual(facts.domains, [{ domain: 'fragmented.example.test', ip: '192.0.2.1' }]);
    assert.equal(facts.udp.length, 1, 'the reassembled answer belongs to the query\'s flow');
  });

  it('leaves out a datagram whose fragments never all came, and goes on with the rest', async () => {
    const { answer } = bigAnswer('lost.example.test', 9);
    const partial = fragments(udpDatagram({ src: RESOLVER, sport: 53, dst: MACHINE, dport: 40001 }, answer, 5), 576);
    const complete = bigAnswer('kept.example.test', 10);
    const file = write('udp-lost-fragment.pcap', [
      ...partial.slice(0, -1),
      ...fragments(udpDatagram({ src: RESOLVER, sport: 53, dst: MACHINE, dport: 40002 }, complete.answer, 6), 576),
    ]);
    const { facts } = await analysePcap(file);
    assert.deepEqual((await tsharkAnswers(file)).map((entry) => entry.name), ['kept.example.test']);
    assert.deepEqual(facts.dns.map((entry) => entry.request), ['kept.example.test']);
  });

  it('reads an HTTP request whose TCP segment was fragmented, as tshark does', async () => {
    const connection = { src: MACHINE, sport: 41000, dst: '198.51.100.7', dport: 80 };
    const request = `GET /stage2.bin HTTP/1.1\r\nHost: frag.example.test\r\nUser-Agent: ${'x'.repeat(1400)}\r\n\r\n`;
    const file = write('tcp-fragments.pcap', [
      whole(tcpDatagram({ ...connection, flags: TCP_SYN, seq: 1000 }, 1)),
      whole(tcpDatagram({ src: connection.dst, sport: 80, dst: MACHINE, dport: 41000, flags: SYN_ACK, seq: 5000 }, 2)),
      ...fragments(tcpDatagram({ ...connection, seq: 1001, payload: request }, 3), 600),
    ]);
    const { facts } = await analysePcap(file);
    const requests = await tshark(file, ['-Y', 'http.request', '-T', 'fields', '-e', 'http.host', '-e', 'http.request.uri']);
    assert.deepEqual(requests, ['frag.example.test\t/stage2.bin']);
    assert.deepEqual(facts.http.map((entry) => `${entry.host}\t${entry.path}`), requests);
    assert.equal(facts.http[0]!['user-agent'], 'x'.repeat(1400));
  });

  it('reads DNS over TCP (length-prefixed messages, the answer split over two segments) into network.dns, as tshark does', async () => {
    const { query, answer, addresses } = bigAnswer('tcp.example.test', 0x4321);
    const client = { src: MACHINE, sport: 42000, dst: RESOLVER, dport: 53 };
    const server = { src: RESOLVER, sport: 53, dst: MACHINE, dport: 42000 };
    const reply = lengthPrefixed(answer);
    const file = write('dns-tcp.pcap', [
      whole(tcpDatagram({ ...client, flags: TCP_SYN, seq: 100 }, 1)),
      whole(tcpDatagram({ ...server, flags: SYN_ACK, seq: 900 }, 2)),
      whole(tcpDatagram({ ...client, flags: ACK, seq: 101 }, 3)),
      whole(tcpDatagram({ ...client, seq: 101, payload: lengthPrefixed(query) }, 4)),
      whole(tcpDatagram({ ...server, seq: 901, payload: reply.subarray(0, 1000) }, 5)),
      whole(tcpDatagram({ ...server, seq: 1901, payload: reply.subarray(1000) }, 6)),
    ]);
    const { facts } = await analysePcap(file);
    assert.deepEqual(await tsharkAnswers(file), [{ name: 'tcp.example.test', addresses }]);
    assert.deepEqual(facts.dns, [{ request: 'tcp.example.test', type: 'A', answers: addresses.map((data) => ({ type: 'A', data })) }]);
    assert.deepEqual(facts.dns_servers, [RESOLVER]);
    assert.deepEqual(facts.irc, [], 'the DNS bytes are not read as another protocol');
    assert.deepEqual(facts.tcp.map((flow) => `${flow.dst}:${flow.dport}`), [`${RESOLVER}:53`]);
  });
});
