import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { fixtureSource } from '../fixtures/tracer-harness.js';
import { allCalls, analyseSample, assertCuckooShape, assertReverseShell, signatureNames, type ReportView } from '../helpers/evasion-samples.js';
import { startTestServer, type TestServer } from '../helpers/server.js';

/**
 * Issue 10 end to end with each tracer (nestbox's monitor, and the strace fallback): C samples
 * (test/fixtures) submitted through the API run on the Linux machine against the task network's fake
 * internet, and the report names their system calls in Cuckoo's shape: apistats by syscall name, calls
 * with arguments, payloads as text, and the signatures the decoded calls make possible.
 */

function analyse(server: TestServer, name: string, content: Buffer, timeout: string, args = ''): Promise<ReportView> {
  return analyseSample(server, name, content, { timeout, package: 'generic', ...(args ? { options: `arguments=${args}` } : {}) });
}

for (const tracer of ['ebpf', 'strace'] as const) describe(`end to end: system calls in the report (Linux machine, ${tracer === 'ebpf' ? "nestbox's monitor" : 'strace fallback'})`, { timeout: 900_000 }, () => {
  let server: TestServer;
  let build: string;
  const binary = (name: string) => readFileSync(join(build, name));

  before(async () => {
    build = mkdtempSync(join(tmpdir(), 'nestbox-e2e-syscalls-'));
    for (const name of ['reverse-shell', 'daemon', 'json-line-client', 'monitor-openat-count']) {
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
