import assert from 'node:assert/strict';
import { randomInt } from 'node:crypto';
import dgram from 'node:dgram';
import net from 'node:net';
import { after, before, describe, it } from 'node:test';
import dnsPacket from 'dns-packet';
import { analysePcap } from '../../src/processing/network-analysis.js';
import type { Report, SignatureMatch } from '../../src/report/report-types.js';
import { runSignatures } from '../../src/signatures/index.js';
import type { AnalysisPaths } from '../../src/storage/layout.js';
import { converse, startCapture, stopCapture } from '../helpers/capture.js';
import { baseReport, makeAnalysis } from '../helpers/signatures.js';

/**
 * Network signatures fed the way the pipeline feeds them: real traffic captured by tcpdump, turned into
 * the network section by the processing engineer's capture analysis, then the signatures. The traffic
 * stays on loopback, on an address of 127.0.0.0/8 picked for this run, with tiny local servers standing
 * in for a bot's DNS resolver, mail server, IRC server and mining pool.
 */

const GENERATED_NAMES = ['xkqzjvbtrwpl.com', 'q8f3k2l9zx7m.net', 'bcdfrtzkwplmn.org', 'zq4x8r7t2wv.info'];

function startDns(host: string): Promise<dgram.Socket> {
  const socket = dgram.createSocket('udp4');
  socket.on('message', (message, remote) => {
    const query = dnsPacket.decode(message);
    const question = query.questions?.[0];
    if (!question) return;
    const answers: dnsPacket.Answer[] =
      question.type === 'TXT' ? [{ type: 'TXT', name: question.name, ttl: 60, data: 'cmd=update' }] : [{ type: 'A', name: question.name, ttl: 60, data: '192.0.2.10' }];
    socket.send(dnsPacket.encode({ type: 'response', id: query.id, flags: dnsPacket.RECURSION_DESIRED, questions: query.questions, answers }), remote.port, remote.address);
  });
  return new Promise((resolve) => socket.bind(53, host, () => resolve(socket)));
}

/** A server that greets (when asked to) and reads whatever the client sends. */
function startTcp(host: string, port: number, greeting?: string): Promise<net.Server> {
  const server = net.createServer((socket) => {
    if (greeting) socket.write(greeting);
    socket.on('data', () => undefined);
    socket.on('error', () => undefined);
  });
  return new Promise((resolve) => server.listen(port, host, () => resolve(server)));
}

function query(host: string, name: string, type: 'A' | 'TXT'): Promise<void> {
  const socket = dgram.createSocket('udp4');
  return new Promise((resolve, reject) => {
    socket.once('message', () => {
      socket.close();
      resolve();
    });
    socket.once('error', reject);
    socket.send(dnsPacket.encode({ type: 'query', id: randomInt(1, 65535), flags: dnsPacket.RECURSION_DESIRED, questions: [{ type, name }] }), 53, host);
  });
}

describe('network signatures on a real capture', () => {
  let analysis: { paths: AnalysisPaths; remove(): void };
  let report: Report;
  let matches: SignatureMatch[];

  before(async () => {
    analysis = makeAnalysis();
    const host = `127.${randomInt(1, 255)}.${randomInt(1, 255)}.${randomInt(2, 255)}`;
    const dns = await startDns(host);
    const servers = await Promise.all([startTcp(host, 25, '220 mail ESMTP\r\n'), startTcp(host, 6667), startTcp(host, 3333)]);
    const capture = await startCapture(analysis.paths.pcap, { iface: 'lo', filter: `host ${host}` });
    try {
      for (const name of [...GENERATED_NAMES, 'pool.supportxmr.com']) await query(host, name, 'A');
      await query(host, 'cfg.example.net', 'TXT');
      await converse(host, 25, ['EHLO bot\r\n', 'MAIL FROM:<bot@example.net>\r\n', 'RCPT TO:<victim@example.org>\r\n', 'DATA\r\n', 'Subject: hi\r\n\r\nspam\r\n.\r\n', 'QUIT\r\n']);
      await converse(host, 6667, ['NICK bot123\r\n', 'USER bot123 0 * :bot\r\n', 'JOIN #commands\r\n']);
      await converse(host, 3333, ['{"id":1,"jsonrpc":"2.0","method":"mining.subscribe","params":["cpuminer/2.5.1"]}\n']);
    } finally {
      await stopCapture(capture);
      dns.close();
      for (const server of servers) server.close();
    }
    const { facts } = await analysePcap(analysis.paths.pcap);
    report = baseReport(analysis.paths.binary, { network: { mitm: [], ...facts } });
    matches = await runSignatures(report, analysis.paths);
  });
  after(() => analysis.remove());

  const matched = (name: string) => {
    const match = matches.find((candidate) => candidate.name === name);
    assert.ok(match, `${name} did not match; matched: ${matches.map((candidate) => candidate.name).join(', ')}`);
    return match;
  };

  it('finds the generated domain names among the DNS queries (dga_domains)', () => {
    const iocs = matched('dga_domains').marks.map((mark) => mark.ioc);
    assert.deepEqual([...iocs].sort(), [...GENERATED_NAMES].sort());
  });

  it('finds the TXT query (dns_txt_query) and the pool domain (miner_pool)', () => {
    assert.deepEqual(matched('dns_txt_query').marks.map((mark) => mark.ioc), ['cfg.example.net']);
    assert.ok(matched('miner_pool').marks.some((mark) => mark.ioc === 'pool.supportxmr.com'));
  });

  it('finds the mail session (outbound_smtp) and the IRC session (irc_traffic)', () => {
    assert.ok(report.network?.smtp.length, 'the capture analysis saw the SMTP session');
    assert.ok(matched('outbound_smtp').marks.some((mark) => mark.type === 'ioc' && mark.category === 'smtp'));
    assert.ok(matched('irc_traffic').marks.some((mark) => mark.type === 'ioc' && mark.ioc === 'JOIN #commands'));
  });

  it('finds the stratum subscription in the capture (miner_stratum)', () => {
    assert.deepEqual(matched('miner_stratum').marks.map((mark) => mark.ioc), ['mining.subscribe']);
  });
});
