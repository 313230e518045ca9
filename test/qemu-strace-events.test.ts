import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { BehaviorEvent } from '../src/analysis/events.js';
import { EventDecoder } from '../src/machinery/linux/tracer/event-decoder.js';
import type { TraceRecord } from '../src/machinery/linux/tracer/trace-records.js';
import { StraceRecords, straceOptions } from '../src/machinery/qemu/strace-records.js';

/**
 * The guest's strace output, decoded on the host into behaviour events. Here strace runs on the host
 * (Debian's, like the guest's) with exactly the options the analyzer gets, on a script doing what samples
 * do, so the parser reads real output. Its network traffic goes to a listener of the test on loopback.
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
    const parser = new StraceRecords((record) => {
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
    const before = records.length;
    const parser = new StraceRecords((record) => records.push(record));
    for (const line of ['', 'garbage', '12 notatime call()', '12 1.5 --- SIGCHLD {si_signo=0x11} ---', '12 1.5 <... read resumed>) = 1']) parser.line(line);
    assert.deepEqual(records.slice(before).map((record) => record.op), ['identity']);
  });
});
