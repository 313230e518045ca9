import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { randomInt } from 'node:crypto';
import dgram from 'node:dgram';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer as createHttpServer, type Server as HttpServer } from 'node:http';
import net from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { promisify } from 'node:util';
import dnsPacket from 'dns-packet';
import { analysePcap, type NetworkFacts } from '../../src/processing/network-analysis.js';
import { LINKTYPE, readPcap } from '../../src/processing/pcap.js';
import { converse, startCapture, stopCapture } from '../helpers/capture.js';

/**
 * The capture parser on real captures: tcpdump records, on loopback only, a DNS dialogue with a tiny
 * DNS server (dig), HTTP requests to a local server (curl, IPv4 and IPv6), a TLS ClientHello with SNI
 * (openssl s_client), an SMTP and an IRC dialogue, a ping and connections to closed ports; the facts
 * are compared with what tshark reads from the same files.
 */

const run = promisify(execFile);
const tshark = async (file: string, args: string[]) =>
  (await run('tshark', ['-n', '-r', file, ...args], { maxBuffer: 32 << 20, env: { ...process.env, LC_ALL: 'C' } })).stdout
    .split('\n')
    .filter((line) => line.length > 0);

interface Ports {
  dns: number;
  http: number;
  smtp: number;
  tls: number;
  irc: number;
  closedTcp: number;
  closedUdp: number;
}

/** Flows with their file offsets zeroed (they differ between formats) and times to the microsecond. */
const withoutOffsets = (facts: NetworkFacts) => ({
  ...facts,
  tcp: facts.tcp.map((flow) => ({ ...flow, offset: 0, time: Math.round(flow.time * 1e6) })),
  udp: facts.udp.map((flow) => ({ ...flow, offset: 0, time: Math.round(flow.time * 1e6) })),
});

const listen = (server: net.Server | HttpServer, host: string, port = 0) =>
  new Promise<number>((resolve) => server.listen(port, host, () => resolve((server.address() as net.AddressInfo).port)));

async function freePort(): Promise<number> {
  const server = net.createServer();
  const port = await listen(server, '127.0.0.1');
  await new Promise((resolve) => server.close(resolve));
  return port;
}

/** A DNS server answering every A query with 192.0.2.10 and every AAAA with 2001:db8::10 (documentation addresses). */
function dnsServer(socket: dgram.Socket): void {
  socket.on('message', (message, remote) => {
    const query = dnsPacket.decode(message);
    const question = query.questions![0]!;
    const answers: dnsPacket.Answer[] =
      question.type === 'A' ? [{ type: 'A', name: question.name, ttl: 60, data: '192.0.2.10' }]
      : question.type === 'AAAA' ? [{ type: 'AAAA', name: question.name, ttl: 60, data: '2001:db8::10' }]
      : [];
    const reply = dnsPacket.encode({ type: 'response', id: query.id, flags: dnsPacket.RECURSION_DESIRED, questions: query.questions, answers });
    socket.send(reply, remote.port, remote.address);
  });
}

/** Lines of a line-based protocol (SMTP, IRC) as they go on the wire. */
const crlfLines = (lines: string[]) => lines.map((line) => `${line}\r\n`);

describe('network facts from real captures', () => {
  let dir: string;
  let ports: Ports;
  let stray: string;
  let dnsHost: string;
  const closers: Array<() => Promise<unknown> | void> = [];
  const files = { ethernet: '', cooked: '' };

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'nestbox-pcap-'));
    stray = `127.${randomInt(1, 255)}.${randomInt(1, 255)}.${randomInt(2, 255)}`;
    // DNS on its real port, 53, on an address of our own in 127.0.0.0/8 (and on ::1).
    dnsHost = `127.${randomInt(1, 255)}.${randomInt(1, 255)}.${randomInt(2, 255)}`;
    const udp4 = dgram.createSocket('udp4');
    const udp6 = dgram.createSocket('udp6');
    await new Promise<void>((resolve) => udp4.bind(53, dnsHost, () => resolve()));
    await new Promise<void>((resolve) => udp6.bind(53, '::1', () => resolve()));
    dnsServer(udp4);
    dnsServer(udp6);
    closers.push(
      () => {
        udp4.close();
      },
      () => {
        udp6.close();
      },
    );

    const http = createHttpServer((request, response) => {
      request.resume();
      request.on('end', () => response.end('ok'));
    });
    const http6 = createHttpServer((request, response) => {
      request.resume();
      request.on('end', () => response.end('ok'));
    });
    const httpPort = await listen(http, '127.0.0.1');
    await listen(http6, '::1', httpPort);
    const lineServer = (greeting: string) =>
      net.createServer((socket) => {
        if (greeting) socket.write(`${greeting}\r\n`);
        socket.on('data', (data) => {
          if (greeting.startsWith('220')) socket.write(data.toString().startsWith('DATA') ? '354 go on\r\n' : '250 ok\r\n');
        });
        socket.on('error', () => undefined);
      });
    const smtp = lineServer('220 mail.test ESMTP');
    const irc = lineServer('');
    const tls = net.createServer((socket) => {
      // A listener that never answers the ClientHello: the client's first flight is all we need.
      socket.on('data', () => socket.destroy());
      socket.on('error', () => undefined);
    });
    ports = {
      dns: 53,
      http: httpPort,
      smtp: await listen(smtp, '127.0.0.1'),
      tls: await listen(tls, '127.0.0.1'),
      irc: await listen(irc, '127.0.0.1'),
      closedTcp: await freePort(),
      closedUdp: await freePort(),
    };
    for (const server of [http, http6, smtp, irc, tls]) closers.push(() => new Promise((resolve) => server.close(resolve)));

    const interesting = [ports.http, ports.smtp, ports.tls, ports.irc].map((port) => `port ${port}`).join(' or ');
    const filter = `host ${stray} or host ${dnsHost} or (udp and host ::1 and port 53) or ((tcp or udp) and (${interesting}))`;
    files.ethernet = join(dir, 'lo.pcap');
    files.cooked = join(dir, 'any.pcap');
    const captures = [await startCapture(files.ethernet, { iface: 'lo', filter }), await startCapture(files.cooked, { iface: 'any', filter })];
    try {
      await run('dig', [`@${dnsHost}`, 'c2.example.test', 'A', '+tries=1', '+time=2']);
      await run('dig', [`@${dnsHost}`, 'c2.example.test', 'AAAA', '+tries=1', '+time=2']);
      await run('dig', ['@::1', 'v6.example.test', 'A', '+tries=1', '+time=2']);
      await run('curl', ['-s', '-A', 'nestbox-agent/1.0', '-H', 'Host: www.example.test', `http://127.0.0.1:${ports.http}/gate.php?id=7`]);
      await run('curl', ['-s', '-A', 'poster/2', '--data-binary', 'secret=42&x=y', `http://127.0.0.1:${ports.http}/upload`]);
      await run('curl', ['-s', '-g', '-A', 'six/6', `http://[::1]:${ports.http}/v6path`]);
      await run('openssl', ['s_client', '-servername', 'tls.example.test', '-connect', `127.0.0.1:${ports.tls}`], { timeout: 10000 }).catch(() => undefined);
      await converse('127.0.0.1', ports.smtp, crlfLines(['EHLO bot.test', 'MAIL FROM:<bot@bot.test>', 'RCPT TO:<victim@mail.test>', 'DATA', 'Subject: stolen', '', 'passwords', '.', 'QUIT']));
      await converse('127.0.0.1', ports.irc, crlfLines(['NICK bot123', 'USER bot 0 * :bot', 'JOIN #control', 'PRIVMSG #control :ready']));
      await run('busybox', ['ping', '-c', '1', '-W', '1', stray]);
      await new Promise<void>((resolve) => {
        const socket = net.connect(ports.closedTcp, stray);
        socket.on('error', () => resolve());
        socket.on('connect', () => socket.destroy());
      });
      const sender = dgram.createSocket('udp4');
      await new Promise((resolve) => sender.send('hello?', ports.closedUdp, stray, resolve));
      await new Promise((resolve) => setTimeout(resolve, 300));
      sender.close();
    } finally {
      // Late packets (a server's closing RST) must land in both captures or in neither: settle, then
      // stop them together.
      await new Promise((resolve) => setTimeout(resolve, 500));
      await Promise.all(captures.map(stopCapture));
    }
  });

  after(async () => {
    for (const close of closers) await close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('reads Ethernet and Linux cooked v2 captures alike', async () => {
    const kinds = new Set<number>();
    for await (const record of readPcap(files.cooked)) kinds.add(record.linktype);
    assert.deepEqual([...kinds], [LINKTYPE.LINUX_SLL2]);
    // The live 'any' capture parses (it can miss packets under load, so it is not compared whole).
    assert.ok((await analysePcap(files.cooked)).facts.dns.length > 0);
    // The same packets in both link types must give the same facts: the Ethernet capture is rewritten
    // with Linux cooked v2 headers and both are analysed.
    const converted = join(dir, 'converted-sll2.pcap');
    writeFileSync(converted, ethernetToSll2(readFileSync(files.ethernet)));
    const withoutOffsets = (facts: NetworkFacts) => ({
      ...facts,
      tcp: facts.tcp.map(({ offset: _offset, ...flow }) => flow),
      udp: facts.udp.map(({ offset: _offset, ...flow }) => flow),
    });
    const ethernet = withoutOffsets((await analysePcap(files.ethernet)).facts);
    const cooked = withoutOffsets((await analysePcap(converted)).facts);
    assert.deepEqual(cooked, ethernet);
  });

  it('lists DNS queries with their answers as tshark decodes them', async () => {
    const { facts } = await analysePcap(files.ethernet);
    const decode: string[] = [];
    const queries = await tshark(files.ethernet, [...decode, '-Y', 'dns.flags.response == 0', '-T', 'fields', '-e', 'dns.qry.name', '-e', 'dns.qry.type']);
    const types: Record<string, string> = { '1': 'A', '28': 'AAAA' };
    assert.deepEqual(
      facts.dns.map((entry) => `${entry.request} ${entry.type}`).sort(),
      [...new Set(queries.map((line) => { const [name, type] = line.split('\t'); return `${name} ${types[type!]}`; }))].sort(),
    );
    const answers = await tshark(files.ethernet, [...decode, '-Y', 'dns.flags.response == 1', '-T', 'fields', '-e', 'dns.qry.name', '-e', 'dns.a', '-e', 'dns.aaaa']);
    for (const line of answers) {
      const [name, a, aaaa] = line.split('\t');
      const address = a || aaaa;
      assert.ok(facts.dns.some((entry) => entry.request === name && entry.answers.some((answer) => answer.data === address)), `${name} -> ${address}`);
    }
    assert.deepEqual(facts.domains, [
      { domain: 'c2.example.test', ip: '192.0.2.10' },
      { domain: 'v6.example.test', ip: '192.0.2.10' },
    ]);
    assert.deepEqual(facts.dns_servers.sort(), [dnsHost, '::1'].sort());
  });

  it('lists HTTP requests with host, URI, user agent and body as tshark decodes them', async () => {
    const { facts, urlsByDestination } = await analysePcap(files.ethernet);
    const requests = await tshark(files.ethernet, [
      '-d', `tcp.port==${ports.http},http`, '-Y', 'http.request', '-T', 'fields',
      '-e', 'http.request.method', '-e', 'http.host', '-e', 'http.request.uri', '-e', 'http.user_agent', '-e', 'tcp.dstport',
    ]);
    assert.equal(requests.length, 3);
    assert.deepEqual(
      facts.http.map((entry) => [entry.method, entry.host, entry.path, entry['user-agent'], String(entry.port)].join('\t')).sort(),
      requests.sort(),
    );
    const post = facts.http.find((entry) => entry.method === 'POST')!;
    assert.equal(post.body, 'secret=42&x=y');
    assert.match(post.data, /^POST \/upload HTTP\/1\.1\r\n/);
    assert.equal(facts.http.find((entry) => entry.path === '/gate.php?id=7')!.uri, `http://www.example.test:${ports.http}/gate.php?id=7`);
    assert.equal(facts.http.find((entry) => entry.path === '/v6path')!.uri, `http://[::1]:${ports.http}/v6path`);
    assert.deepEqual(urlsByDestination.get(`::1|${ports.http}`), [`http://[::1]:${ports.http}/v6path`]);
  });

  it('takes the server name from the TLS ClientHello as tshark does', async () => {
    const { facts } = await analysePcap(files.ethernet);
    const names = await tshark(files.ethernet, ['-d', `tcp.port==${ports.tls},tls`, '-Y', 'tls.handshake.type == 1', '-T', 'fields', '-e', 'tls.handshake.extensions_server_name']);
    assert.deepEqual(names, ['tls.example.test']);
    assert.deepEqual(facts.tls, [{ dst: '127.0.0.1', dport: ports.tls, sni: 'tls.example.test' }]);
  });

  it('keeps the SMTP dialogue and the IRC commands of the clients', async () => {
    const { facts } = await analysePcap(files.ethernet);
    const commands = await tshark(files.ethernet, ['-d', `tcp.port==${ports.smtp},smtp`, '-Y', 'smtp.req.command', '-T', 'fields', '-e', 'smtp.req.command']);
    assert.equal(facts.smtp.length, 1);
    for (const command of commands) assert.ok(facts.smtp[0]!.raw.includes(`${command} `) || facts.smtp[0]!.raw.includes(`${command}\r\n`), command);
    assert.ok(facts.smtp[0]!.raw.includes('Subject: stolen'));
    const irc = await tshark(files.ethernet, ['-d', `tcp.port==${ports.irc},irc`, '-Y', 'irc.request.command', '-T', 'fields', '-e', 'irc.request.command']);
    assert.deepEqual(facts.irc.map((entry) => entry.command), irc);
    assert.deepEqual(facts.irc[2], { dst: '127.0.0.1', command: 'JOIN', params: '#control' });
  });

  it('lists TCP and UDP flows, ICMP messages, hosts and dead hosts as the packets show them', async () => {
    const { facts } = await analysePcap(files.ethernet);
    const syns = await tshark(files.ethernet, [
      '-Y', 'tcp.flags.syn == 1 && tcp.flags.ack == 0', '-T', 'fields',
      '-e', 'ip.src', '-e', 'ipv6.src', '-e', 'tcp.srcport', '-e', 'ip.dst', '-e', 'ipv6.dst', '-e', 'tcp.dstport', '-e', 'frame.time_relative',
    ]);
    const flows = syns.map((line) => {
      const [src4, src6, sport, dst4, dst6, dport, time] = line.split('\t');
      return { src: src4 || src6, sport: Number(sport), dst: dst4 || dst6, dport: Number(dport), time: Number(time) };
    });
    assert.equal(facts.tcp.length, flows.length);
    for (const [index, flow] of flows.entries()) {
      const mine = facts.tcp[index]!;
      assert.deepEqual({ src: mine.src, sport: mine.sport, dst: mine.dst, dport: mine.dport }, { src: flow.src, sport: flow.sport, dst: flow.dst, dport: flow.dport });
      assert.ok(Math.abs(mine.time - flow.time) < 1e-6);
    }
    const conversations = (await tshark(files.ethernet, ['-q', '-z', 'conv,udp'])).filter((line) => line.includes('<->'));
    assert.equal(facts.udp.length, conversations.length);

    const icmpTypes = await tshark(files.ethernet, ['-Y', 'icmp', '-T', 'fields', '-e', 'icmp.type']);
    assert.deepEqual(facts.icmp.map((entry) => String(entry.type)), icmpTypes);
    assert.ok(facts.icmp.some((entry) => entry.type === 8 && entry.dst === stray));

    const expectedHosts = new Set([...flows.map((flow) => flow.dst), ...facts.udp.map((flow) => flow.dst), stray]);
    assert.ok(expectedHosts.has(dnsHost));
    assert.deepEqual(new Set(facts.hosts), expectedHosts);
    assert.deepEqual(
      facts.dead_hosts.map(([host, port]) => `${host}:${port}`).sort(),
      [`${stray}:${ports.closedTcp}`, `${stray}:${ports.closedUdp}`].sort(),
    );
    const ignored = (await analysePcap(files.ethernet, { ignoreHosts: [stray, dnsHost, '::1'] })).facts;
    assert.deepEqual(ignored.hosts, ['127.0.0.1']);
  });

  it('reads the same capture saved as pcapng and with nanosecond timestamps', async () => {
    const reference = (await analysePcap(files.ethernet)).facts;
    for (const format of ['pcapng', 'nsecpcap']) {
      const converted = join(dir, `converted.${format}`);
      await run('tshark', ['-r', files.ethernet, '-w', converted, '-F', format]);
      const facts = (await analysePcap(converted)).facts;
      assert.deepEqual(withoutOffsets(facts), withoutOffsets(reference), format);
    }
  });

  it('records where each flow starts in the file', async () => {
    const { facts } = await analysePcap(files.ethernet);
    const offsets = new Set<number>();
    for await (const record of readPcap(files.ethernet)) offsets.add(record.offset);
    for (const flow of [...facts.tcp, ...facts.udp]) assert.ok(offsets.has(flow.offset));
    assert.equal(facts.tcp[0]!.offset >= 24, true);
  });

  it('refuses a file that is no capture, and survives one cut in the middle', async () => {
    writeFileSync(join(dir, 'text.pcap'), 'this is not a capture at all');
    await assert.rejects(analysePcap(join(dir, 'text.pcap')), /not a pcap file/);
    const { readFileSync } = await import('node:fs');
    const whole = readFileSync(files.ethernet);
    writeFileSync(join(dir, 'cut.pcap'), whole.subarray(0, Math.floor(whole.length / 2)));
    const cut = (await analysePcap(join(dir, 'cut.pcap'))).facts;
    assert.ok(cut.dns.length > 0);
  });
});

describe('network facts of a machine behind a private resolver', () => {
  // A network namespace of our own, with private addresses on its loopback: the machine's view of its
  // gateway-resolver, without any traffic leaving the namespace.
  const namespace = `nbproc${randomInt(1e6, 1e7)}`;
  let dir: string;
  let pcap: string;
  const inNamespace = (args: string[], options: { timeout?: number } = {}) => run('ip', ['netns', 'exec', namespace, ...args], options);

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'nestbox-pcap-ns-'));
    pcap = join(dir, 'ns.pcap');
    await run('ip', ['netns', 'add', namespace]);
    await inNamespace(['ip', 'link', 'set', 'lo', 'up']);
    await inNamespace(['ip', 'addr', 'add', '10.123.45.1/32', 'dev', 'lo']);
    await inNamespace(['ip', 'addr', 'add', '10.123.45.9/32', 'dev', 'lo']);
    const capture = await startCapture(pcap, { iface: 'lo', namespace });
    try {
      await inNamespace(['dig', '@10.123.45.1', 'resolver.example.test', '+tries=1', '+time=1']).catch(() => undefined);
      await inNamespace(['curl', '-s', '--max-time', '2', 'http://10.123.45.9:8080/']).catch(() => undefined);
      await new Promise((resolve) => setTimeout(resolve, 200));
    } finally {
      await stopCapture(capture);
    }
  });

  after(async () => {
    await run('ip', ['netns', 'delete', namespace]).catch(() => undefined);
    rmSync(dir, { recursive: true, force: true });
  });

  it('does not count the private resolver as a contacted host, but other private hosts', async () => {
    const { facts } = await analysePcap(pcap);
    assert.deepEqual(facts.dns_servers, ['10.123.45.1']);
    assert.deepEqual(facts.dns.map((entry) => entry.request), ['resolver.example.test']);
    assert.deepEqual(facts.hosts, ['10.123.45.9']);
    assert.deepEqual(facts.dead_hosts.map(([host, port]) => `${host}:${port}`).sort(), ['10.123.45.1:53', '10.123.45.9:8080']);
  });
});

/** Rewrites a little-endian microsecond Ethernet pcap with Linux cooked v2 (SLL2) link headers. */
function ethernetToSll2(pcap: Buffer): Buffer {
  assert.equal(pcap.readUInt32LE(0), 0xa1b2c3d4, 'a little-endian microsecond pcap');
  const header = Buffer.from(pcap.subarray(0, 24));
  header.writeUInt32LE(LINKTYPE.LINUX_SLL2, 20);
  const parts: Buffer[] = [header];
  for (let offset = 24; offset < pcap.length; ) {
    const included = pcap.readUInt32LE(offset + 8);
    const original = pcap.readUInt32LE(offset + 12);
    const frame = pcap.subarray(offset + 16, offset + 16 + included);
    offset += 16 + included;
    const record = Buffer.from(pcap.subarray(offset - 16 - included, offset - included));
    record.writeUInt32LE(included + 6, 8);
    record.writeUInt32LE(original + 6, 12);
    const sll2 = Buffer.alloc(20);
    sll2.writeUInt16BE(frame.readUInt16BE(12), 0); // protocol: the Ethernet type
    sll2.writeUInt32BE(1, 4); // interface index
    sll2.writeUInt16BE(772, 8); // ARPHRD_LOOPBACK
    sll2.writeUInt8(0, 10); // packet to us
    sll2.writeUInt8(6, 11); // address length
    frame.copy(sll2, 12, 6, 12); // source address
    parts.push(record, sll2, frame.subarray(14));
  }
  return Buffer.concat(parts);
}
