import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { after, before, describe, it } from 'node:test';
import { runHost, runIn, testId, tsharkFields } from '../network-helpers.js';

/**
 * route=internet, exercised without any real network: the test builds a world of two namespaces of its
 * own, a stand-in "host" whose internet interface (wan0) leads to a stand-in "internet" namespace that
 * ends there (203.0.113.1, a documentation address, serving HTTP). nestbox runs inside the stand-in
 * host, so its policy routing, forwarding and masquerading are the real thing, confined to that world.
 */
const NETWORK_MODULE = fileURLToPath(new URL('../../src/machinery/host/network/index.js', import.meta.url));

describe('route internet (in a world of namespaces made by the test)', () => {
  const world = testId();
  const hostNs = `nbxtest-${world}-host`;
  const wanNs = `nbxtest-${world}-wan`;
  const dir = mkdtempSync(join(tmpdir(), 'nestbox-net-internet-'));
  let wanServer: ReturnType<typeof spawn>;

  before(async () => {
    const ip = async (args: string[], input: string) => {
      const child = spawn('ip', [...args, '-batch', '-'], { stdio: ['pipe', 'inherit', 'inherit'] });
      child.stdin.end(input);
      assert.equal(await new Promise((resolve) => child.once('exit', resolve)), 0);
    };
    await ip([], `netns add ${hostNs}\nnetns add ${wanNs}\nlink add wan0 netns ${hostNs} type veth peer name eth0 netns ${wanNs}\n`);
    await ip(['-n', hostNs], 'link set lo up\naddr add 203.0.113.2/24 dev wan0\nlink set wan0 up\nroute add default via 203.0.113.1\n');
    await ip(['-n', wanNs], 'link set lo up\naddr add 203.0.113.1/24 dev eth0\nlink set eth0 up\n');
    const links = (ns: string) => runHost('ip', ['-n', ns, '-j', 'link', 'show']).then((o) => (JSON.parse(o.stdout) as { ifname: string }[]).map((l) => l.ifname).sort());
    assert.deepEqual(await links(hostNs), ['lo', 'wan0'], 'the stand-in host has no link but its stand-in internet');
    assert.deepEqual(await links(wanNs), ['eth0', 'lo']);
    assert.equal(JSON.parse((await runHost('ip', ['-n', wanNs, '-j', 'route', 'show', 'default'])).stdout).length, 0, 'the stand-in internet leads nowhere');

    wanServer = spawn('ip', ['netns', 'exec', wanNs, process.execPath, '-e', `
      require('node:http').createServer((q, r) => r.end('seen from ' + q.socket.remoteAddress))
        .listen(80, '203.0.113.1', () => console.log('listening'));
      process.stdin.on('end', () => process.exit(0)).resume();`], { stdio: ['pipe', 'pipe', 'inherit'] });
    await new Promise((resolve) => wanServer.stdout!.once('data', resolve));
  });

  after(async () => {
    wanServer?.stdin?.end();
    await runHost('ip', ['netns', 'del', hostNs]);
    await runHost('ip', ['netns', 'del', wanNs]);
    rmSync(dir, { recursive: true, force: true });
  });

  it('reaches the internet through the configured interface only, masqueraded, and undoes everything', async () => {
    const id = testId();
    const pcap = join(dir, 'internet.pcap');
    const script = `
      import { pino } from 'pino';
      import { spawnSync } from 'node:child_process';
      import { readFileSync } from 'node:fs';
      import net from 'node:net';
      import { createTaskNetwork } from ${JSON.stringify(NETWORK_MODULE)};
      const sh = (command, args) => spawnSync(command, args, { encoding: 'utf8', timeout: 10000 });
      const forwarding = () => readFileSync('/proc/sys/net/ipv4/conf/wan0/forwarding', 'utf8').trim();
      const state = () => ({
        forwarding: forwarding(),
        rules: JSON.parse(sh('ip', ['-j', 'rule', 'show']).stdout).filter((r) => r.table === '50420').length,
        tables: sh('nft', ['list', 'tables']).stdout.trim(),
        links: JSON.parse(sh('ip', ['-j', 'link', 'show']).stdout).map((l) => l.ifname).sort(),
      });
      const hostService = net.createServer((socket) => socket.end('host secret')).listen(2222, '0.0.0.0');
      const before = state();
      const network = await createTaskNetwork({ id: ${JSON.stringify(id)}, route: 'internet', internetInterface: 'wan0',
        pcapPath: ${JSON.stringify(pcap)}, log: pino({ level: 'silent' }) });
      const curl = (url) => { const o = sh('ip', ['netns', 'exec', network.netnsName, 'curl', '-sS', '-m', '2', url]); return { code: o.status, body: o.stdout }; };
      const uplink = JSON.parse(sh('ip', ['-j', '-4', 'addr', 'show', 'nbx-${id}']).stdout)[0].addr_info[0].local;
      const during = { ...state(), route: network.route, wan: curl('http://203.0.113.1/'),
        hostAddress: curl('http://203.0.113.2:2222/'), uplinkHost: curl('http://' + uplink + ':2222/'),
        gateway: curl('http://' + network.gatewayAddress + ':2222/'), guest: network.guestAddress };
      await network.close();
      hostService.close();
      console.log(JSON.stringify({ before, during, after: state() }));`;
    const outcome = await runIn(hostNs, process.execPath, ['--input-type=module', '-e', script], 60_000);
    assert.equal(outcome.code, 0, outcome.stderr);
    const { before: start, during, after: end } = JSON.parse(outcome.stdout) as Record<string, any>;

    assert.equal(during.route, 'internet');
    assert.deepEqual(during.wan, { code: 0, body: 'seen from 203.0.113.2' }, 'the internet sees the interface address, not the machine');
    for (const blocked of ['hostAddress', 'uplinkHost', 'gateway']) {
      assert.notEqual(during[blocked].code, 0, `${blocked}: the machine cannot reach the host's own services`);
      assert.doesNotMatch(during[blocked].body, /host secret/);
    }
    assert.equal(during.forwarding, '1');
    assert.equal(during.rules, 1);
    assert.match(during.tables, new RegExp(`table inet nestbox_${id}`));

    assert.equal(start.forwarding, '0');
    assert.deepEqual(end, start, 'forwarding, rules, tables and links are as they were');
    const requests = await tsharkFields(pcap, 'http.request', ['ip.src', 'ip.dst', 'http.request.uri']);
    assert.deepEqual(requests[0], [during.guest, '203.0.113.1', '/']);
  });
});
