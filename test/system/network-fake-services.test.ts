import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import * as dnsPacket from 'dns-packet';
import { createTaskNetwork, fakeAddressFor } from '../../src/machinery/host/network/index.js';
import { guessProtocol } from '../../src/machinery/host/network/fake-services/catch-all.js';
import { answerQuery } from '../../src/machinery/host/network/fake-services/dns.js';
import { payloadFor, TINY_ELF } from '../../src/machinery/host/network/fake-services/downloads.js';
import { parseLine } from '../../src/machinery/host/network/fake-services/irc.js';
import { quietLog, runHost, runIn, testId } from '../network-helpers.js';

/** The fake services' decisions on their own, and the service process's life inside a gateway. */
describe('fake DNS answers', () => {
  // dns-packet decodes the response code too; its type definitions leave it out.
  const ask = (questions: dnsPacket.Question[], id = 4242) =>
    dnsPacket.decode(answerQuery(dnsPacket.encode({ type: 'query', id, flags: dnsPacket.RECURSION_DESIRED, questions }))!) as dnsPacket.DecodedPacket & { rcode: string };

  it('answers A with the name\'s own address, keeping the query id and the recursion flag', () => {
    const reply = ask([{ type: 'A', name: 'Update.Example' }]);
    assert.equal(reply.id, 4242);
    assert.equal(reply.rcode, 'NOERROR');
    assert.ok(reply.flag_rd && reply.flag_ra && reply.flag_aa);
    assert.deepEqual(reply.answers?.map((answer) => [answer.type, answer.name, (answer as dnsPacket.StringAnswer).data]), [
      ['A', 'Update.Example', fakeAddressFor('update.example')],
    ]);
  });

  it('answers TXT, PTR and NS plausibly and leaves unknown types empty but existing', () => {
    assert.equal((ask([{ type: 'TXT', name: 'x.test' }]).answers?.[0] as dnsPacket.TxtAnswer).data.toString(), 'v=spf1 -all');
    assert.equal((ask([{ type: 'PTR', name: '7.100.51.198.in-addr.arpa' }]).answers?.[0] as dnsPacket.StringAnswer).data, 'host-198-51-100-7.example.net');
    const ns = ask([{ type: 'NS', name: 'x.test' }]);
    assert.equal((ns.answers?.[0] as dnsPacket.StringAnswer).data, 'ns1.x.test');
    assert.equal((ns.additionals?.[0] as dnsPacket.StringAnswer).data, fakeAddressFor('ns1.x.test'));
    const srv = ask([{ type: 'SRV', name: '_ldap._tcp.x.test' }]);
    assert.equal(srv.rcode, 'NOERROR');
    assert.equal(srv.answers?.length, 0);
  });

  it('ignores garbage and responses instead of failing', () => {
    assert.equal(answerQuery(Buffer.from('not dns at all')), null);
    assert.equal(answerQuery(Buffer.alloc(0)), null);
    const response = dnsPacket.encode({ type: 'response', id: 1, questions: [{ type: 'A', name: 'a.test' }] });
    assert.equal(answerQuery(response), null, 'answering answers would let two resolvers loop');
  });
});

describe('catch-all protocol guess', () => {
  it('tells TLS, HTTP and IRC from the first bytes, and anything else as unknown', () => {
    assert.equal(guessProtocol(Buffer.from([0x16, 0x03, 0x01, 0x02, 0x00])), 'tls');
    assert.equal(guessProtocol(Buffer.from('GET / HTTP/1.1\r\nHost: x\r\n\r\n')), 'http');
    assert.equal(guessProtocol(Buffer.from('BEACON /x HTTP/1.0\r\n')), 'http');
    assert.equal(guessProtocol(Buffer.from('NICK bot\r\nUSER a 0 * :a\r\n')), 'irc');
    assert.equal(guessProtocol(Buffer.from([0x05, 0x01, 0x00])), 'unknown', 'SOCKS5 greeting');
    assert.equal(guessProtocol(Buffer.from('GETX')), 'unknown');
  });
});

describe('fake web payloads', () => {
  it('chooses by extension, ignoring the query string', () => {
    assert.notEqual(payloadFor('/a/b/mips?x=1.elf').body, TINY_ELF, 'the extension is the path\'s, not the query\'s');
    assert.equal(payloadFor('/bins/x.mips?x=1').body, TINY_ELF);
    assert.equal(payloadFor('/setup.EXE').contentType, 'application/octet-stream');
    assert.equal(payloadFor('/run.py').contentType, 'text/x-python');
    assert.match(payloadFor('/').body.toString(), /<html>/);
  });
});

describe('IRC line parsing', () => {
  it('splits prefix, command, parameters and the trailing parameter', () => {
    assert.deepEqual(parseLine(':nick!u@h PRIVMSG #c :hello there'), { command: 'PRIVMSG', params: ['#c', 'hello there'] });
    assert.deepEqual(parseLine('join #a,#b'), { command: 'JOIN', params: ['#a,#b'] });
    assert.deepEqual(parseLine(''), { command: '', params: [] });
  });
});

describe('the fake-services process', () => {
  it('runs unprivileged in the gateway and comes back when killed', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'nestbox-net-services-'));
    const network = await createTaskNetwork({ id: testId(), route: 'inetsim', internetInterface: '', pcapPath: join(dir, 'd.pcap'), log: quietLog });
    try {
      const helperPid = async () => {
        const pids = (await runHost('ip', ['netns', 'pids', `${network.netnsName}-gw`])).stdout.split('\n').filter(Boolean);
        return pids.find((pid) => readFileSync(`/proc/${pid}/cmdline`, 'utf8').includes('fake-services/main.js'));
      };
      const first = await helperPid();
      assert.ok(first);
      assert.match(readFileSync(`/proc/${first}/status`, 'utf8'), /^Uid:\s+65534\s+65534\s+65534\s+65534$/m, 'runs as nobody');
      assert.match(readFileSync(`/proc/${first}/status`, 'utf8'), /^CapEff:\s+0+$/m, 'without capabilities');

      process.kill(Number(first), 'SIGKILL');
      let answer = '';
      for (let attempt = 0; attempt < 100 && answer !== fakeAddressFor('back.example'); attempt += 1) {
        await new Promise((resolve) => setTimeout(resolve, 100));
        answer = (await runIn(network.netnsName, 'dig', ['+short', '+tries=1', '+time=1', `@${network.gatewayAddress}`, 'back.example'])).stdout.trim();
      }
      assert.equal(answer, fakeAddressFor('back.example'), 'the resolver answers again');
      assert.notEqual(await helperPid(), first);
    } finally {
      await network.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
