import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { TaskNetwork } from '../../src/machinery/host/contracts.js';
import { createTaskNetwork, interfaceStates } from '../../src/machinery/host/network/index.js';
import { assertNoWayOut, quietLog, remainsOf, runIn, testId, tsharkFields } from '../network-helpers.js';

/**
 * Routes other than the fake internet, the refusal of route=internet without an interface, and the
 * isolation of concurrent tasks. Traffic goes only to documentation addresses inside namespaces this
 * test creates, which have no uplink (assertNoWayOut).
 */
const dir = mkdtempSync(join(tmpdir(), 'nestbox-net-routes-'));
after(() => rmSync(dir, { recursive: true, force: true }));

async function open(route: string, name: string): Promise<TaskNetwork> {
  const network = await createTaskNetwork({
    id: testId(),
    route,
    internetInterface: '',
    pcapPath: join(dir, `${name}.pcap`),
    log: quietLog,
  });
  await assertNoWayOut(network.netnsName, `${network.netnsName}-gw`, network.gatewayAddress);
  return network;
}

describe('route none', () => {
  let network: TaskNetwork;
  before(async () => (network = await open('none', 'none')));
  after(() => network?.close());

  it('refuses every connection at once and resolves nothing', async () => {
    const http = await runIn(network.netnsName, 'curl', ['-sS', '-m', '5', 'http://198.51.100.7/']);
    assert.equal(http.code, 7, `connection refused, not a timeout: ${http.stderr}`);
    assert.ok(http.ms < 2000, `refused fast (${http.ms} ms)`);
    const gateway = await runIn(network.netnsName, 'curl', ['-sS', '-m', '5', `http://${network.gatewayAddress}/`]);
    assert.equal(gateway.code, 7);
    const dns = await runIn(network.netnsName, 'dig', ['+tries=1', '+time=2', `@${network.gatewayAddress}`, 'a.example']);
    assert.notEqual(dns.code, 0);
    assert.doesNotMatch(dns.stdout, /ANSWER SECTION/);
    const ping = await runIn(network.netnsName, 'ping', ['-c', '1', '-W', '1', '203.0.113.1']);
    assert.notEqual(ping.code, 0);
  });
});

describe('route drop', () => {
  let network: TaskNetwork;
  before(async () => (network = await open('drop', 'drop')));

  it('lets every packet vanish unanswered, but captures it', async () => {
    const http = await runIn(network.netnsName, 'curl', ['-sS', '-m', '2', 'http://198.51.100.7/']);
    assert.equal(http.code, 28, `timed out: ${http.stderr}`);
    const dns = await runIn(network.netnsName, 'dig', ['+tries=1', '+time=1', `@${network.gatewayAddress}`, 'a.example']);
    assert.notEqual(dns.code, 0);
    await network.close();
    const pcap = join(dir, 'drop.pcap');
    const syns = await tsharkFields(pcap, 'tcp.flags.syn == 1 && tcp.flags.ack == 0', ['ip.src', 'ip.dst']);
    assert.ok(syns.length >= 1);
    assert.ok(syns.every(([src, dst]) => src === network.guestAddress && dst === '198.51.100.7'));
    const answers = await tsharkFields(pcap, `ip.dst == ${network.guestAddress}`, ['frame.number']);
    assert.equal(answers.length, 0, 'nothing ever came back');
  });
});

describe('route internet', () => {
  it('is refused, saying why, when no internet interface is configured', async () => {
    const id = testId();
    await assert.rejects(
      createTaskNetwork({ id, route: 'internet', internetInterface: '', pcapPath: join(dir, 'x.pcap'), log: quietLog }),
      (error: { kind?: string; message: string }) => error.kind === 'unavailable' && /internet interface/.test(error.message),
    );
    await assert.rejects(
      createTaskNetwork({ id, route: 'internet', internetInterface: 'nbxnope0', pcapPath: join(dir, 'x.pcap'), log: quietLog }),
      (error: { kind?: string; message: string }) => error.kind === 'unavailable' && /nbxnope0 does not exist/.test(error.message),
    );
    await assert.rejects(
      createTaskNetwork({ id, route: 'internet', internetInterface: 'eth0"; drop', pcapPath: join(dir, 'x.pcap'), log: quietLog }),
      (error: { kind?: string }) => error.kind === 'invalid_input',
    );
    assert.deepEqual(await remainsOf(id), [], 'a refused network leaves nothing behind');
  });

  it('refuses routes it does not know', async () => {
    await assert.rejects(
      createTaskNetwork({ id: testId(), route: 'tor', internetInterface: '', pcapPath: join(dir, 'x.pcap'), log: quietLog }),
      (error: { kind?: string; message: string }) => error.kind === 'invalid_input' && /unknown route "tor"/.test(error.message),
    );
  });
});

describe('setup problems', () => {
  it('fails cleanly when the capture cannot be written', async () => {
    const id = testId();
    await assert.rejects(
      createTaskNetwork({ id, route: 'inetsim', internetInterface: '', pcapPath: join(dir, 'missing', 'dump.pcap'), log: quietLog }),
      (error: { kind?: string; message: string }) => error.kind === 'internal' && /cannot write the capture/.test(error.message),
    );
    assert.deepEqual(await remainsOf(id), [], 'what was made before the failure is gone again');
  });
});

describe('interfaceStates', () => {
  it('reports whether the interfaces routes depend on exist and are usable', () => {
    assert.deepEqual(interfaceStates(['lo', 'nbxnope0', '../x']), [
      { name: 'lo', exists: true, state: 'unknown', usable: true },
      { name: 'nbxnope0', exists: false, state: null, usable: false },
      { name: '../x', exists: false, state: null, usable: false },
    ]);
  });
});

describe('two tasks at the same time', () => {
  let first: TaskNetwork;
  let second: TaskNetwork;
  before(async () => ([first, second] = await Promise.all([open('inetsim', 'first'), open('inetsim', 'second')])));
  after(async () => Promise.all([first?.close(), second?.close()]));

  it('cannot reach each other: the other machine\'s addresses lead to one\'s own fake internet', async () => {
    assert.notEqual(first.guestAddress, second.guestAddress);
    const port = 8081;
    // A listener inside the second machine, on its own address, counting connections.
    const listener = spawn('ip', ['netns', 'exec', second.netnsName, process.execPath, '-e', `
      let count = 0;
      require('node:net').createServer((s) => { count += 1; s.end(); }).listen(${port}, '${second.guestAddress}', () => console.log('listening'));
      process.stdin.on('end', () => { console.log('connections ' + count); process.exit(0); }).resume();`], { stdio: ['pipe', 'pipe', 'inherit'] });
    let output = '';
    listener.stdout.setEncoding('utf8').on('data', (chunk: string) => (output += chunk));
    const exited = new Promise((resolve) => listener.once('exit', resolve));
    try {
      await new Promise<void>((resolve) => listener.stdout.on('data', () => output.includes('listening') && resolve()));
      const own = await runIn(second.netnsName, 'curl', ['-sS', '-m', '3', `http://${second.guestAddress}:${port}/`]);
      assert.equal(own.code, 52, 'the listener works: it takes the connection and closes it (empty reply)');

      for (const target of [second.guestAddress, second.gatewayAddress]) {
        const attempt = await runIn(first.netnsName, 'curl', ['-sS', '-m', '3', '-o', '/dev/null', '-w', '%{http_code}', `http://${target}:${port}/`]);
        assert.equal(attempt.stdout, '200', `answered by the first task's fake internet, not by the second task (${target})`);
      }
    } finally {
      listener.stdin.end();
      await exited;
    }
    assert.match(output, /connections 1\n/, 'only the second task itself reached its listener');

    await Promise.all([first.close(), second.close()]);
    const strangers = await tsharkFields(join(dir, 'second.pcap'), `ip.addr == ${first.guestAddress}`, ['frame.number']);
    assert.equal(strangers.length, 0, 'no packet of the first task appears on the second task\'s link');
    const tried = await tsharkFields(join(dir, 'first.pcap'), `ip.dst == ${second.guestAddress} && tcp.flags.syn == 1`, ['frame.number']);
    assert.ok(tried.length >= 1, 'the first task\'s attempt is in its own capture');
  });
});
