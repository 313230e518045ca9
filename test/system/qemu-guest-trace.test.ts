import assert from 'node:assert/strict';
import { execFileSync, spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { pino } from 'pino';
import type { BehaviorEvent } from '../../src/report/events.js';
import { configSchema } from '../../src/config/schema.js';
import { analysisRequest, runToCollection } from '../helpers/analysis-request.js';
import { EventDecoder } from '../../src/machinery/host/tracer/event-decoder.js';
import { StraceParser } from '../../src/machinery/host/tracer/strace-parser.js';
import type { TraceRecord } from '../../src/machinery/host/tracer/trace-records.js';
import { GuestTraceDecoder, straceOptions } from '../../src/machinery/qemu/guest-trace.js';
import { createQemuMachinery } from '../../src/machinery/qemu/index.js';
import type { Machinery } from '../../src/machinery/types.js';
import { AnalysisPaths } from '../../src/storage/layout.js';
import { fixtureSource } from '../fixtures/tracer-harness.js';
import { COLLECT_GRACE_S } from '../helpers/qemu-timing.js';
import { zipSample } from '../helpers/zip-sample.js';

/**
 * The guest's strace fallback output, decoded on the host by the host tracer's strace parser into
 * behaviour events. Here strace runs on the host (Debian's, like the guest's) with exactly the options
 * the analyzer gets, on a script doing what samples do, so the parser reads real output. Its network
 * traffic goes to a listener of the test on loopback.
 */
const PYTHON_PART = String.raw`
import ctypes, os, socket, sys, threading
threading.Thread(target=lambda: None).start()
ctypes.CDLL(None).prctl(15, b"renamed-proc", 0, 0, 0)
s = socket.create_connection(("127.0.0.1", int(sys.argv[1])))
s.sendall(b"hello listener")
s.close()
u = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
u.sendto(b"ping", ("127.0.0.1", int(sys.argv[1])))
fd = os.memfd_create("payload")
os.write(fd, b"\x7fELF")
`;

let dir: string;
let listener: Server;
let port: number;
let events: BehaviorEvent[];
let records: TraceRecord[];

function find(kind: string, test: (event: Record<string, unknown>) => boolean = () => true): Record<string, unknown> | undefined {
  return events.find((event) => event.kind === kind && test(event as unknown as Record<string, unknown>)) as Record<string, unknown> | undefined;
}

describe('strace output from the guest into behaviour events', () => {
  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'nestbox-strace-'));
    listener = createServer((socket) => socket.resume());
    listener.listen(0, '127.0.0.1');
    await once(listener, 'listening');
    port = (listener.address() as { port: number }).port;
    writeFileSync(join(dir, 'part.py'), PYTHON_PART);
    writeFileSync(
      join(dir, 'sample.sh'),
      [
        '#!/bin/sh',
        `cd ${dir}`,
        'echo "dropped content" > note.txt',
        'mkdir sub',
        'mv note.txt "sub/n o t e.txt"',
        'chmod 700 sub',
        'ln -s /etc/passwd link',
        'rm link',
        '( exit 3 )',
        `/usr/bin/python3 part.py ${port}`,
        'rmdir sub 2>/dev/null',
        'echo done',
      ].join('\n'),
    );
    const trace = join(dir, 'trace.txt');
    const child = spawn('strace', [...straceOptions(), '-o', trace, '--', 'sh', join(dir, 'sample.sh')], { stdio: 'ignore' });
    const [code] = (await once(child, 'exit')) as [number];
    assert.equal(code, 0, 'strace ran the script');
    events = [];
    records = [];
    const decoder = new EventDecoder((event) => events.push(event));
    const parser = new StraceParser((record) => {
      records.push(record);
      decoder.record(record);
    }, process.pid);
    for (const line of readFileSync(trace, 'latin1').split('\n')) parser.line(line);
    decoder.finish(Date.now() / 1000);
  });

  after(() => {
    listener.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('follows the process tree: exec, fork, exit codes, names', () => {
    const root = find('process.exec', (event) => String(event.path).endsWith('/sh'));
    assert.ok(root, 'the first exec');
    assert.equal(root.ppid, process.pid);
    const python = find('process.exec', (event) => event.path === '/usr/bin/python3');
    assert.ok(python);
    assert.deepEqual((python.argv as string[]).slice(1), ['part.py', String(port)]);
    assert.ok(find('process.fork', (event) => event.child === python.pid));
    assert.ok(find('process.exit', (event) => event.code === 3), 'the subshell exits with 3');
    assert.ok(find('process.exit', (event) => event.pid === root.pid && event.code === 0));
    assert.ok(find('process.rename', (event) => event.name === 'renamed-proc'));
  });

  it('tells threads from processes', () => {
    const python = find('process.exec', (event) => event.path === '/usr/bin/python3')!;
    const threadRecords = records.filter((record) => record.op === 'identity' && record.pid === python.pid && record.tid !== python.pid);
    assert.ok(threadRecords.length > 0, 'the python thread is known as a thread of its process');
    assert.equal(events.filter((event) => event.kind === 'process.exit' && event.pid === python.pid).length, 1, 'one exit for the process, none for its thread');
  });

  it('records file activity with absolute paths, including names with spaces', () => {
    assert.ok(find('file.write', (event) => event.path === join(dir, 'note.txt') && event.bytes === 16));
    assert.ok(find('file.mkdir', (event) => event.path === join(dir, 'sub') && event.ret === 0));
    assert.ok(find('file.rename', (event) => event.from === join(dir, 'note.txt') && event.to === join(dir, 'sub/n o t e.txt')));
    assert.ok(find('file.chmod', (event) => event.path === join(dir, 'sub') && event.mode === 0o700));
    assert.ok(find('file.link', (event) => event.from === '/etc/passwd' && event.to === join(dir, 'link') && event.symbolic === true));
    assert.ok(find('file.delete', (event) => event.path === join(dir, 'link') && event.ret === 0));
    const rmdir = find('file.rmdir', (event) => event.path === join(dir, 'sub'));
    assert.ok(rmdir && (rmdir.ret as number) < 0, 'rmdir of a non-empty folder fails');
  });

  it('records network activity with addresses and ports', () => {
    assert.ok(find('net.socket', (event) => event.family === 'inet' && ((event.type as number) & 0xf) === 1), 'a TCP socket (SOCK_CLOEXEC kept in the type)');
    assert.ok(find('net.connect', (event) => event.address === '127.0.0.1' && event.port === port && event.ret === 0));
    const sent = events.filter((event) => event.kind === 'net.send' && (event as { address?: string }).address === '127.0.0.1');
    assert.ok(sent.some((event) => (event as { bytes: number }).bytes === 14), 'the TCP payload');
    assert.ok(sent.some((event) => (event as { port?: number }).port === port && (event as { bytes: number }).bytes === 4), 'the UDP datagram');
  });

  it('records memory-only files and executable mappings', () => {
    assert.ok(find('memory.memfd', (event) => event.name === 'payload' && (event.ret as number) >= 0));
    assert.ok(find('file.write', (event) => event.path === 'memfd:payload' && event.bytes === 4));
    assert.ok(find('memory.exec_map', (event) => String(event.path ?? '').includes('libc.so')));
  });

  it('ignores lines that are not strace records', () => {
    const seen: TraceRecord[] = [];
    const parser = new StraceParser((record) => seen.push(record));
    for (const line of ['', 'garbage', '12 notatime call()', '12 1.5 --- SIGCHLD {si_signo=0x11} ---', '12 1.5 <... read resumed>) = 1']) parser.line(line);
    assert.deepEqual(seen, []);
  });

  it('reads the stream the guest sends: the header names the tracer, then the same events follow', () => {
    const trace = readFileSync(join(dir, 'trace.txt'), 'latin1').split('\n');
    const streamed: BehaviorEvent[] = [];
    const stream = new GuestTraceDecoder((event) => streamed.push(event));
    stream.line('left over from before the header');
    stream.line('nestbox-trace strace the task chose strace');
    for (const line of trace) stream.line(line);
    stream.end();
    assert.equal(stream.tracer, 'strace');
    assert.equal(streamed[0]?.kind, 'tracer.info');
    assert.match(String((streamed[0] as { message?: string }).message), /strace.*the task chose strace/);
    const kinds = (list: BehaviorEvent[]) => list.filter((e) => e.kind !== 'tracer.info').map((e) => e.kind).sort();
    assert.ok(streamed.some((event) => event.kind === 'process.exec' && (event as { argv?: string[] }).argv?.[1] === 'part.py'));
    assert.deepEqual(kinds(streamed), kinds(events), 'the same events as decoding the file in order');
  });
});

/**
 * A real task in nestbox's guest image under TCG: QEMU restored from the image's ready state, whose
 * eBPF tracer was attached before the memory was saved. The sample is a zip of a script and a static
 * build of the PTRACE_TRACEME check; its network traffic stays in the task's own network (the fake
 * internet), and the agent's network leads nowhere.
 */
const log = pino({ level: process.env.NESTBOX_TEST_LOG ?? 'silent' });
/** The settings of qemu-machine.test.ts: the same hardware shares its ready state. */
const GUEST_SETTINGS = { memory_mb: 256, run_dir: '/run/nestbox/qemu-trace-test', collect_grace: COLLECT_GRACE_S, screenshots: false };
const FAKE_SERVER = '192.0.2.10';

const GUEST_SCRIPT = [
  '#!/bin/sh',
  'here=$(dirname "$0")',
  'chmod +x "$here/ptrace-check"',
  '/bin/echo guest says hi',
  'echo "dropped by the sample" > /tmp/guest-note.txt',
  `curl -s -m 8 -o /dev/null http://${FAKE_SERVER}:8080/beacon`,
  '"$here/ptrace-check" /tmp/misbehaved; echo "ptrace check exit $?"',
].join('\n');

async function sampleZip(dir: string): Promise<Buffer> {
  const checker = join(dir, 'ptrace-check');
  execFileSync('gcc', ['-static', '-O2', '-o', checker, fixtureSource('tracer-ptrace-check.c')]);
  return zipSample([
    ['run.sh', GUEST_SCRIPT],
    ['ptrace-check', readFileSync(checker)],
  ]);
}

interface GuestRun {
  events: Array<BehaviorEvent & Record<string, unknown>>;
  analysisLog: string;
}

describe('behaviour tracing inside the qemu guest (TCG)', { timeout: 40 * 60_000 }, () => {
  let machinery: Machinery;
  /** nestbox's image with strace added (extra_packages), for the analyzer's fallback. */
  let straceMachinery: Machinery;
  let work: string;
  let zip: Buffer;
  let nextTask = 9600;

  async function analyse(options: Record<string, string>, on = machinery): Promise<GuestRun> {
    const taskId = nextTask++;
    const paths = new AnalysisPaths(join(work, `task-${taskId}`));
    paths.create();
    mkdirSync(join(work, `sample-${taskId}`));
    const samplePath = join(work, `sample-${taskId}`, 'sample.zip');
    writeFileSync(samplePath, zip);
    const session = await on.start(
      analysisRequest(on === machinery ? 'qt' : 'qs', { taskId, paths, samplePath, package: 'zip', options: { file: 'run.sh', ...options }, timeoutSeconds: 60, log }),
    );
    await runToCollection(session);
    const events = readFileSync(join(paths.logs, 'events.jsonl'), 'utf8')
      .split('\n')
      .filter(Boolean)
      .map((line) => JSON.parse(line) as BehaviorEvent & Record<string, unknown>);
    return { events, analysisLog: readFileSync(paths.analysisLog, 'utf8') };
  }

  const first = (run: GuestRun, kind: string, test: (event: Record<string, unknown>) => boolean = () => true) =>
    run.events.find((event) => event.kind === kind && test(event));

  /** The task as it runs by default: traced by nestbox's monitor in the guest. */
  let standard: GuestRun;
  let strace: GuestRun;

  before(async () => {
    work = mkdtempSync(join(tmpdir(), 'nestbox-guest-trace-'));
    zip = await sampleZip(work);
    const config = configSchema.parse({
      machines: [
        { name: 'qt', kind: 'qemu', settings: GUEST_SETTINGS },
        { name: 'qs', kind: 'qemu', settings: { ...GUEST_SETTINGS, run_dir: `${GUEST_SETTINGS.run_dir}-strace`, extra_packages: ['strace'] } },
      ],
    });
    machinery = createQemuMachinery(config, log);
    await machinery.prepare();
    standard = await analyse({});
    straceMachinery = createQemuMachinery({ ...config, machines: [config.machines[1]!] }, log);
    await straceMachinery.prepare();
    strace = await analyse({ tracer: 'strace' }, straceMachinery);
  });

  after(async () => {
    await machinery?.close?.();
    await straceMachinery?.close?.();
    rmSync(work, { recursive: true, force: true });
  });

  it('traces with the monitor of nestbox, and says so', () => {
    const info = first(standard, 'tracer.info');
    assert.equal(info?.tracer, 'ebpf', standard.analysisLog);
    assert.match(String(info?.message), /nestbox's monitor in the guest/);
    assert.equal(first(standard, 'tracer.lost'), undefined, 'nothing was lost');
    assert.doesNotMatch(standard.analysisLog, /strace/);
  });

  it('records exec with argv, file writes and connects with decoded addresses', () => {
    const ebpf = standard;
    const echo = first(ebpf, 'process.exec', (event) => event.path === '/bin/echo');
    assert.deepEqual(echo?.argv, ['/bin/echo', 'guest', 'says', 'hi']);
    assert.ok(Math.abs(Number(echo?.ts) - Date.now() / 1000) < 600, 'guest times are converted to the epoch');
    assert.ok(first(ebpf, 'file.write', (event) => event.path === '/tmp/guest-note.txt' && event.bytes === 22));
    const curl = first(ebpf, 'process.exec', (event) => String(event.path).endsWith('/curl'));
    assert.ok(curl);
    assert.ok(
      first(ebpf, 'net.connect', (event) => event.pid === curl.pid && event.address === FAKE_SERVER && event.port === 8080),
      'the connect to the fake server',
    );
  });

  it('is invisible to PTRACE_TRACEME: the check misbehaves in the guest', () => {
    const ebpf = standard;
    assert.match(ebpf.analysisLog, /ptrace check exit 0/);
    const check = first(ebpf, 'process.exec', (event) => String(event.path).endsWith('/ptrace-check'));
    assert.ok(check);
    assert.ok(first(ebpf, 'process.ptrace', (event) => event.pid === check.pid && event.request === 0 && event.ret === 0));
    assert.ok(first(ebpf, 'file.write', (event) => event.pid === check.pid && event.path === '/tmp/misbehaved'));
  });

  it('falls back to strace on request, decoded by the same strace parser, and the sample sees it', () => {
    const info = first(strace, 'tracer.info');
    assert.equal(info?.tracer, 'strace', strace.analysisLog);
    assert.match(String(info?.message), /the task chose strace/);
    assert.deepEqual(first(strace, 'process.exec', (event) => event.path === '/bin/echo')?.argv, ['/bin/echo', 'guest', 'says', 'hi']);
    assert.ok(first(strace, 'net.connect', (event) => event.address === FAKE_SERVER && event.port === 8080));
    assert.match(strace.analysisLog, /ptrace check exit 1/);
    assert.equal(first(strace, 'file.write', (event) => event.path === '/tmp/misbehaved'), undefined);
  });
});
