import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { NetworkSection } from '../../src/report/report-types.js';
import { looksGenerated, registeredLabel } from '../../src/signatures/helpers/domain-names.js';
import { ethernetTcpPcap } from '../helpers/pcap-file.js';
import { emptyNetwork, EventLog, signatureCases } from '../helpers/signatures.js';

function network(sections: Partial<NetworkSection>): NetworkSection {
  return { ...emptyNetwork(), ...sections };
}

function dns(...names: string[]): NetworkSection['dns'] {
  return names.map((request) => ({ request, type: 'A', answers: [{ type: 'A', data: '192.0.2.10' }] }));
}

function tcp(dst: string, dport: number, time: number): NetworkSection['tcp'][number] {
  return { src: '10.13.0.2', sport: 40000 + Math.round(time), dst, dport, offset: 24, time };
}

/** A capture holding one packet from the machine to a server on port 3333, with this payload. */
function pcapWithPayload(payload: string): Buffer {
  return ethernetTcpPcap([{ src: '10.13.0.2', sport: 40001, dst: '203.0.113.50', dport: 3333, payload }]);
}

const hex = (text: string) => Buffer.from(text).toString('hex');

/** A program sending `head` (an HTTP request head) to 203.0.113.80:80 at each of `times`, one connection each. */
function httpPolls(program: string, times: readonly number[], head: (index: number) => string): EventLog {
  const log = new EventLog().exec(850, program, [program]);
  times.forEach((at, index) => {
    log.connect(850, '203.0.113.80', 80, { at });
    const payload = head(index);
    log.add(850, { kind: 'net.send', fd: 3, family: 'inet', address: '203.0.113.80', port: 80, bytes: payload.length, payload: hex(payload), ret: payload.length }, { api: 'sendto' });
  });
  return log;
}

const BOT_POST = 'POST /gate.php HTTP/1.1\r\nHost: c2.nestbox.test\r\nUser-Agent: nbbot/2.1\r\nContent-Length: 12\r\n\r\nid=42&cmd=0\n';
const EVERY_5_S = [1_700_000_010, 1_700_000_015.2, 1_700_000_020.1, 1_700_000_025, 1_700_000_030.3, 1_700_000_035];

const GENERATED = ['xkqzjvbtrwpl.com', 'q8f3k2l9zx7m.net', 'bcdfrtzkwplmn.org', 'zq4x8r7t2wv.info', 'mnbvcxzlkjhg.biz'];
const ORDINARY = [
  'google.com',
  'objects.githubusercontent.com',
  'login.microsoftonline.com',
  'd111111abcdef8.cloudfront.net',
  'scontent.cdninstagram.com',
  's3.amazonaws.com',
  'fbstatic-a.akamaihd.net',
  'stats.doubleclick.net',
  'fonts.googleapis.com',
  'en.wikipedia.org',
  'stackoverflow.com',
  'deb.debian.org',
  'www.bbc.co.uk',
  'registry.npmjs.org',
];

describe('network signatures', () => {
  signatureCases([
    {
      signature: 'c2_beaconing',
      title: 'five connections about 30 s apart in the behaviour log',
      scenario: () => {
        const log = new EventLog();
        for (const at of [1_700_000_010, 1_700_000_040.4, 1_700_000_069.8, 1_700_000_100.1, 1_700_000_130]) log.connect(800, '203.0.113.7', 443, { at });
        return { events: log };
      },
    },
    {
      signature: 'c2_beaconing',
      title: 'regular flows in the capture',
      scenario: () => ({ report: { network: network({ tcp: [5, 15.2, 25.1, 35, 45.3, 55].map((time) => tcp('198.51.100.4', 8080, time)) }) } }),
    },
    {
      signature: 'c2_beaconing',
      title: 'irregular connections, and too few',
      matches: false,
      scenario: () => ({
        report: {
          network: network({
            tcp: [...[1, 2, 50, 51, 200].map((time) => tcp('198.51.100.4', 443, time)), ...[1, 11, 21].map((time) => tcp('198.51.100.5', 443, time))],
          }),
        },
      }),
    },
    {
      signature: 'c2_beaconing',
      title: 'regular HTTP requests (left to http_beaconing)',
      matches: false,
      scenario: () => ({ events: httpPolls('/tmp/bot', EVERY_5_S, () => BOT_POST) }),
    },
    {
      signature: 'http_beaconing',
      title: 'the same POST every 5 s with a User-Agent of its own, in the behaviour log',
      scenario: () => ({ events: httpPolls('/tmp/bot', EVERY_5_S, () => BOT_POST) }),
    },
    {
      signature: 'http_beaconing',
      title: 'a browser User-Agent sent by a program that is no browser',
      scenario: () => ({ events: httpPolls('/usr/bin/python3', EVERY_5_S, () => 'GET /tasks HTTP/1.1\r\nHost: 203.0.113.80\r\nUser-Agent: Mozilla/5.0 (Windows NT 10.0; Win64; x64)\r\n\r\n') }),
    },
    {
      signature: 'http_beaconing',
      title: 'repeated requests in the capture, timed by their flows',
      scenario: () => ({
        report: {
          network: network({
            dns: dns('c2.nestbox.test'),
            tcp: [10, 20.4, 30.1, 40, 49.8].map((time) => tcp('192.0.2.10', 80, time)),
            http: [{ ...httpRequest('c2.nestbox.test', '/beacon'), count: 5, method: 'POST', 'user-agent': 'nbbot/2.1' }],
          }),
        },
      }),
    },
    {
      signature: 'http_beaconing',
      title: 'curl polling a status page every 5 s (an ordinary tool in a loop)',
      matches: false,
      scenario: () => ({ events: httpPolls('/usr/bin/curl', EVERY_5_S, () => 'GET /status HTTP/1.1\r\nHost: 203.0.113.80\r\nUser-Agent: curl/7.88.1\r\nAccept: */*\r\n\r\n') }),
    },
    {
      signature: 'http_beaconing',
      title: 'a single download with a custom User-Agent',
      matches: false,
      scenario: () => ({ events: httpPolls('/tmp/fetch', [1_700_000_010], () => 'GET /file.tar.gz HTTP/1.1\r\nHost: 203.0.113.80\r\nUser-Agent: fetcher/1.0\r\n\r\n') }),
    },
    {
      signature: 'http_beaconing',
      title: 'a crawler fetching a different path each time',
      matches: false,
      scenario: () => ({ events: httpPolls('/tmp/crawl', EVERY_5_S, (index) => `GET /page/${index} HTTP/1.1\r\nHost: 203.0.113.80\r\nUser-Agent: crawler/0.1\r\n\r\n`) }),
    },
    {
      signature: 'http_beaconing',
      title: 'the same request at irregular times (a user clicking)',
      matches: false,
      scenario: () => ({ events: httpPolls('/tmp/bot', [1_700_000_010, 1_700_000_011, 1_700_000_030, 1_700_000_031.5, 1_700_000_090], () => BOT_POST) }),
    },
    {
      signature: 'dga_domains',
      title: 'five random-looking names resolved',
      scenario: () => ({ report: { network: network({ dns: dns(...GENERATED) }) } }),
    },
    {
      signature: 'dga_domains',
      title: 'popular and CDN domains',
      matches: false,
      scenario: () => ({ report: { network: network({ dns: dns(...ORDINARY) }) } }),
    },
    {
      signature: 'miner_stratum',
      title: 'mining.subscribe in the capture',
      scenario: () => ({
        files: { 'dump.pcap': pcapWithPayload('{"id":1,"method":"mining.subscribe","params":["cpuminer/2.5.1"]}\n') },
      }),
    },
    {
      signature: 'miner_stratum',
      title: 'xmrig started with a stratum URL',
      scenario: () => ({ events: new EventLog().exec(810, '/tmp/.x/xmrig', ['xmrig', '-o', 'stratum+tcp://203.0.113.50:3333', '-u', '4AbC', '--donate-level=1']) }),
    },
    {
      signature: 'miner_stratum',
      title: 'a stratum URL among the sample\'s strings',
      scenario: () => ({ report: { strings: ['usage: %s [options]', 'stratum+tcp://xmr.pool.example:5555'] } }),
    },
    {
      signature: 'miner_stratum',
      title: 'a capture of ordinary web traffic',
      matches: false,
      scenario: () => ({ files: { 'dump.pcap': pcapWithPayload('GET /index.html HTTP/1.1\r\nHost: example.com\r\n\r\n') } }),
    },
    {
      signature: 'miner_pool',
      title: 'a pool domain and a pool port',
      scenario: () => ({
        report: { network: network({ dns: dns('pool.supportxmr.com'), tcp: [tcp('203.0.113.50', 14444, 3)] }) },
      }),
    },
    {
      signature: 'miner_pool',
      title: 'ordinary domains on web ports',
      matches: false,
      scenario: () => ({ report: { network: network({ dns: dns(...ORDINARY), tcp: [tcp('192.0.2.10', 443, 3)] }) } }),
    },
    {
      signature: 'outbound_smtp',
      title: 'a connection to port 25',
      scenario: () => ({ events: new EventLog().connect(820, '198.51.100.3', 25) }),
    },
    {
      signature: 'outbound_smtp',
      title: 'an SMTP session in the capture',
      scenario: () => ({ report: { network: network({ smtp: [{ dst: '198.51.100.3', raw: 'EHLO bot\r\nMAIL FROM:<a@b.example>\r\n' }] }) } }),
    },
    {
      signature: 'irc_traffic',
      title: 'a bot joining an IRC channel',
      scenario: () => ({
        events: new EventLog().connect(830, '198.51.100.8', 6667),
        report: { network: network({ irc: [{ dst: '198.51.100.8', command: 'JOIN', params: '#bots' }] }) },
      }),
    },
    {
      signature: 'dns_txt_query',
      title: 'a TXT query',
      scenario: () => ({ report: { network: network({ dns: [{ request: 'cfg.example.net', type: 'TXT', answers: [{ type: 'TXT', data: 'aGVsbG8=' }] }] }) } }),
    },
    {
      signature: 'dns_txt_query',
      title: 'A and AAAA queries',
      matches: false,
      scenario: () => ({ report: { network: network({ dns: [...dns('example.com'), { request: 'example.com', type: 'AAAA', answers: [] }] }) } }),
    },
    {
      signature: 'http_raw_ip',
      title: 'a payload fetched from a bare IP',
      scenario: () => ({ report: { network: network({ http: [httpRequest('198.51.100.9', '/bins/x86')] }) } }),
    },
    {
      signature: 'http_raw_ip',
      title: 'requests to a domain and to loopback',
      matches: false,
      scenario: () => ({ report: { network: network({ http: [httpRequest('example.com', '/'), httpRequest('127.0.0.1:8080', '/')] }) } }),
    },
    {
      signature: 'tor_usage',
      title: 'Tor\'s local SOCKS port and an onion address',
      scenario: () => ({
        events: new EventLog().connect(840, '127.0.0.1', 9050),
        report: { network: network({ dns: dns('abcdefghijklmnop.onion') }) },
      }),
    },
    {
      signature: 'tor_usage',
      title: 'the tor program',
      scenario: () => ({ events: new EventLog().exec(841, '/usr/bin/tor', ['tor', '--SocksPort', '9060']) }),
    },
    {
      signature: 'network_scanning',
      title: 'Telnet probed on 25 hosts',
      scenario: () => {
        const log = new EventLog();
        for (let host = 1; host <= 25; host++) log.connect(850, `198.51.100.${host}`, 23, { ret: -111 });
        return { events: log };
      },
    },
    {
      signature: 'network_scanning',
      title: 'a handful of connections',
      matches: false,
      scenario: () => {
        const log = new EventLog();
        for (let host = 1; host <= 5; host++) log.connect(851, `198.51.100.${host}`, 443);
        return { events: log };
      },
    },
  ]);

  it('tells generated domain labels from names people choose', () => {
    for (const domain of GENERATED) assert.ok(looksGenerated(registeredLabel(domain)), domain);
    for (const domain of ORDINARY) assert.ok(!looksGenerated(registeredLabel(domain)), domain);
    assert.ok(!looksGenerated(registeredLabel('pool.supportxmr.com')), 'a brand mashup');
    assert.equal(registeredLabel('www.x8kq2j.co.uk'), 'x8kq2j');
    assert.equal(registeredLabel('a.b.example.com.'), 'example');
  });
});

function httpRequest(host: string, path: string): NetworkSection['http'][number] {
  return { count: 1, host, port: 80, data: `GET ${path} HTTP/1.1\r\nHost: ${host}\r\n\r\n`, uri: `http://${host}${path}`, body: '', path, 'user-agent': 'Wget/1.21', version: '1.1', method: 'GET' };
}
