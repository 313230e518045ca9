import assert from 'node:assert/strict';
import { type ChildProcess, execFile, execFileSync, spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { promisify } from 'node:util';
import { pino } from 'pino';
import type { BehaviorEvent } from '../../src/report/events.js';
import { type AppContext, createContext } from '../../src/app.js';
import { validateConfig } from '../../src/config/load.js';
import type { NewTask } from '../../src/db/schema.js';
import { isNestboxError } from '../../src/errors.js';
import { processTask } from '../../src/pipeline/process-task.js';
import { CallsIndex } from '../../src/report/calls-index-query.js';
import type { Report } from '../../src/report/report-types.js';
import { scoreOf } from '../../src/signatures/index.js';
import type { AnalysisPaths } from '../../src/storage/layout.js';
import { MonitorLogWriter } from '../helpers/cuckoo-monitor-log.js';

/**
 * The whole processing pipeline on a real data layer (SQLite in a temporary home) and real raw results:
 * a sample compiled by gcc, a capture taken by tcpdump of an HTTP request on loopback, an event log in
 * the tracer's format, a dropped file, a screenshot made by ImageMagick and a process memory dump.
 */

const run = promisify(execFile);
const sha256 = (data: Buffer | string) => createHash('sha256').update(data).digest('hex');

async function captureHttp(pcap: string): Promise<number> {
  const server = createServer((request, response) => {
    request.resume();
    response.end('payload');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  const tcpdump: ChildProcess = spawn('tcpdump', ['-i', 'lo', '-n', '--immediate-mode', '-U', '-w', pcap, `tcp port ${port}`], { stdio: ['ignore', 'ignore', 'pipe'] });
  await new Promise<void>((resolve) => {
    let stderr = '';
    tcpdump.stderr!.on('data', (data: Buffer) => {
      stderr += data.toString();
      if (stderr.includes('listening on')) resolve();
    });
  });
  await run('curl', ['-s', '-A', 'evil-agent/1.0', `http://127.0.0.1:${port}/stage2.bin`]);
  const exited = new Promise((resolve) => tcpdump.once('exit', resolve));
  tcpdump.kill('SIGINT');
  await exited;
  await new Promise((resolve) => server.close(resolve));
  return port;
}

/** A process memory dump in Cuckoo's layout: per region a 24-byte header, then its bytes. */
function memoryDump(regions: Array<{ address: bigint; protect: number; data: Buffer }>): Buffer {
  return Buffer.concat(
    regions.flatMap(({ address, protect, data }) => {
      const header = Buffer.alloc(24);
      header.writeBigUInt64LE(address, 0);
      header.writeUInt32LE(data.length, 8);
      header.writeUInt32LE(0x1000, 12);
      header.writeUInt32LE(0x20000, 16);
      header.writeUInt32LE(protect, 20);
      return [header, data];
    }),
  );
}

describe('processing pipeline', () => {
  let home: string;
  let ctx: AppContext;
  let sample: Buffer;
  let sampleId: number;
  let httpPort: number;
  const work = mkdtempSync(join(tmpdir(), 'nestbox-pipeline-src-'));

  before(async () => {
    home = mkdtempSync(join(tmpdir(), 'nestbox-pipeline-'));
    const config = validateConfig({ paths: { storage: join(home, 'storage'), tmppath: join(home, 'tmp') }, logging: { level: 'silent' } });
    ctx = await createContext({ config, home, log: pino({ level: 'silent' }) });
    mkdirSync(join(home, 'yara'));
    writeFileSync(join(home, 'yara', 'operator.yar'), 'rule operator_marker { meta: description = "operator rule" strings: $m = "NESTBOX-MARKER-7" condition: $m }');

    writeFileSync(join(work, 'sample.c'), '#include <stdio.h>\nint main(void) { puts("NESTBOX-MARKER-7 contacting http://c2.example.test/gate"); return 0; }\n');
    execFileSync('gcc', ['-O1', '-o', join(work, 'sample'), join(work, 'sample.c')]);
    sample = readFileSync(join(work, 'sample'));
    sampleId = await ctx.stores.samples.upsert({
      file_size: sample.length,
      file_type: execFileSync('file', ['-b', join(work, 'sample')], { encoding: 'utf8' }).trim(),
      md5: createHash('md5').update(sample).digest('hex'),
      crc32: '00000000',
      sha1: createHash('sha1').update(sample).digest('hex'),
      sha256: sha256(sample),
      sha512: createHash('sha512').update(sample).digest('hex'),
      ssdeep: null,
    });
    ctx.layout.ensure();
    writeFileSync(ctx.layout.binary(sha256(sample)), sample);
    httpPort = await captureHttp(join(work, 'dump.pcap'));
    execFileSync('/usr/bin/convert', ['-size', '32x24', 'xc:navy', join(work, 'shot.jpg')]);
  });

  after(async () => {
    await ctx.close();
    rmSync(home, { recursive: true, force: true });
    rmSync(work, { recursive: true, force: true });
  });

  async function newTask(overrides: Partial<NewTask> = {}): Promise<{ id: number; paths: AnalysisPaths }> {
    const now = new Date();
    const id = await ctx.stores.tasks.insert({
      target: '/tmp/upload/dropper.elf',
      category: 'file',
      timeout: 60,
      priority: 1,
      custom: 'c',
      owner: 'alice',
      machine: '',
      package: 'elf',
      platform: 'linux',
      tags: '[]',
      options: 'procmemdump=yes,free=no',
      memory: 0,
      enforce_timeout: 0,
      clock: now.toISOString(),
      added_on: new Date(now.getTime() - 60000).toISOString(),
      started_on: new Date(now.getTime() - 50000).toISOString(),
      completed_on: new Date(now.getTime() - 20000).toISOString(),
      status: 'completed',
      sample_id: sampleId,
      submit_id: null,
      processing: null,
      route: 'none',
      reboot_of: null,
      ...overrides,
    });
    const paths = ctx.layout.analysis(id);
    paths.create();
    return { id, paths };
  }

  /** Raw results as the engine leaves them. */
  function fillResults(paths: AnalysisPaths): void {
    symlinkSync(ctx.layout.binary(sha256(sample)), paths.binary);
    copyFileSync(join(work, 'dump.pcap'), paths.pcap);
    const events: BehaviorEvent[] = [
      { ts: 1000, pid: 50, ppid: 1, tid: 50, comm: 'init', kind: 'process.exec', path: '/tmp/dropper.elf', argv: ['/tmp/dropper.elf'], ret: 0 },
      { ts: 1001, pid: 50, ppid: 1, tid: 50, comm: 'dropper.elf', kind: 'net.connect', fd: 3, family: 'inet', address: '127.0.0.1', port: httpPort, ret: 0 },
      { ts: 1002, pid: 50, ppid: 1, tid: 50, comm: 'dropper.elf', kind: 'file.open', path: '/tmp/stage2.bin', flags: 0o101, mode: 0o755, ret: 4 },
      { ts: 1003, pid: 50, ppid: 1, tid: 50, comm: 'dropper.elf', kind: 'file.write', path: '/tmp/stage2.bin', bytes: 7 },
      { ts: 1004, pid: 50, ppid: 1, tid: 50, comm: 'dropper.elf', kind: 'tracer.lost', count: 3 },
    ];
    writeFileSync(join(paths.dir, 'logs', 'events.jsonl'), events.map((e) => JSON.stringify(e)).join('\n') + '\n');
    writeFileSync(join(paths.files, '0123456789abcdef_stage2.bin'), sample);
    writeFileSync(join(paths.files, 'fedcba9876543210_untracked.txt'), 'left behind');
    writeFileSync(
      paths.filesJson,
      [
        JSON.stringify({ path: 'files/0123456789abcdef_stage2.bin', filepath: '/tmp/stage2.bin', pids: [50] }),
        JSON.stringify({ path: '../../../../etc/passwd', filepath: '/etc/passwd', pids: [50] }),
        'not json',
      ].join('\n'),
    );
    symlinkSync('/etc/passwd', join(paths.files, 'aaaaaaaaaaaaaaaa_link'));
    copyFileSync(join(work, 'shot.jpg'), join(paths.shots, '0001.jpg'));
    copyFileSync(join(work, 'shot.jpg'), join(paths.shots, '0001_small.jpg'));
    writeFileSync(
      join(paths.memory, '50.dmp'),
      memoryDump([
        { address: 0x400000n, protect: 0x20, data: Buffer.from('\x7fELF....NESTBOX-MARKER-7 http://mem.example.test/cfg\0\0'.padEnd(4096, '\0')) },
        { address: 0x7ffd0000n, protect: 0x04, data: Buffer.alloc(8192, 0x41) },
      ]),
    );
    symlinkSync('/etc/passwd', join(paths.memory, '51.dmp'));
    writeFileSync(paths.analysisLog, 'analyzer started\nsample ran\n');
    writeFileSync(paths.taskLog, '2026-01-01 10:00:00,000 [nestbox.scheduler] INFO: task started\n');
  }

  const readReport = (paths: AnalysisPaths): Report => JSON.parse(readFileSync(paths.reportJson, 'utf8')) as Report;

  it('turns raw results into every report section and marks the task reported', async () => {
    const { id, paths } = await newTask();
    fillResults(paths);
    await ctx.stores.tasks.addError(id, 'the machine was slow to start', 'vmrouting');
    await processTask(ctx, id);
    assert.equal((await ctx.stores.tasks.get(id))!.status, 'reported');
    assert.ok(existsSync(paths.reportHtml), 'the report writers wrote report.html beside report.json');
    const report = readReport(paths);
    assert.deepEqual(Object.keys(report), [
      'info', 'target', 'static', 'strings', 'yara', 'behavior', 'network', 'dropped', 'screenshots', 'procmemory', 'debug', 'metadata', 'signatures',
    ]);

    assert.equal(report.info.id, id);
    assert.equal(report.info.options, 'free=no,procmemdump=yes');
    assert.equal(report.info.duration, 30);
    assert.equal(report.info.events_lost, 3);
    assert.equal(report.info.score, scoreOf(report.signatures), 'the score is the signatures\' score');

    const file = report.target.file!;
    assert.equal(file.name, 'dropper.elf');
    assert.equal(file.sha256, sha256(sample));
    assert.equal(file.path, ctx.layout.binary(sha256(sample)));
    assert.equal(file.ssdeep, execFileSync('ssdeep', ['-s', '-b', file.path!], { encoding: 'utf8' }).split('\n')[1]!.split(',')[0]);
    assert.deepEqual(file.urls, ['http://c2.example.test/gate']);
    assert.deepEqual(file.yara.map((match) => match.name), ['operator_marker']);
    assert.deepEqual(report.yara, file.yara);

    const elf = (report.static as { elf: { needed: string[]; interpreter: string } }).elf;
    assert.deepEqual(elf.needed, ['libc.so.6']);
    assert.equal(elf.interpreter, '/lib64/ld-linux-x86-64.so.2');
    assert.ok(report.strings!.includes('NESTBOX-MARKER-7 contacting http://c2.example.test/gate'));

    const behavior = report.behavior!;
    assert.equal(behavior.processes[0]!.process_path, '/tmp/dropper.elf');
    assert.deepEqual(behavior.summary.file_written, ['/tmp/stage2.bin']);
    assert.deepEqual(behavior.summary.fetches_url, [`http://127.0.0.1:${httpPort}/stage2.bin`], 'the URL the process fetched, from the capture');

    const network = report.network!;
    assert.equal(network.pcap_sha256, sha256(readFileSync(paths.pcap)));
    assert.deepEqual(network.http.map((entry) => [entry.method, entry.path, entry['user-agent']]), [['GET', '/stage2.bin', 'evil-agent/1.0']]);

    assert.deepEqual(
      report.dropped!.map((entry) => [entry.name, entry.filepath, entry.pids, entry.sha256]),
      [
        ['0123456789abcdef_stage2.bin', '/tmp/stage2.bin', [50], sha256(sample)],
        ['fedcba9876543210_untracked.txt', 'untracked.txt', [], sha256('left behind')],
      ],
      'index lines outside files/ and links are ignored',
    );
    assert.deepEqual(report.screenshots, [{ path: join(paths.shots, '0001.jpg'), ocr: '' }]);

    const memory = report.procmemory![0] as { pid: number; regions: Array<{ addr: string; size: number; protect: string }>; yara: Array<{ name: string }>; urls: string[] };
    assert.equal(report.procmemory!.length, 1, 'a link among the dumps is not followed');
    assert.equal(memory.pid, 50);
    assert.deepEqual(memory.regions.map((region) => [region.addr, region.size, region.protect]), [
      ['0x400000', 4096, 'PAGE_EXECUTE_READ'],
      ['0x7ffd0000', 8192, 'PAGE_READWRITE'],
    ]);
    assert.deepEqual(memory.yara.map((match) => match.name), ['operator_marker']);
    assert.deepEqual(memory.urls, ['http://mem.example.test/cfg']);

    assert.deepEqual(report.debug, {
      log: ['analyzer started', 'sample ran'],
      cuckoo: ['2026-01-01 10:00:00,000 [nestbox.scheduler] INFO: task started'],
      action: ['vmrouting'],
      errors: ['the machine was slow to start'],
    });
    const output = (report.metadata as { output: { pcap: { basename: string; sha256: string }; memdumps: Array<{ dirname: string; basename: string }> } }).output;
    assert.deepEqual(output.pcap, { dirname: '', basename: 'dump.pcap', sha256: network.pcap_sha256 });
    assert.deepEqual(output.memdumps.map((dump) => `${dump.dirname}/${dump.basename}`), ['memory/50.dmp']);
    assert.ok(report.signatures.every((match) => typeof match.name === 'string' && typeof match.severity === 'number'));
    // The ELF dropped in /tmp is what the signature engine's executable_dropped_tmp looks for.
    assert.ok(report.signatures.some((match) => match.name === 'executable_dropped_tmp'), JSON.stringify(report.signatures.map((m) => m.name)));
    assert.ok(report.info.score > 0);
    assert.equal((await ctx.stores.tasks.get(id))!.score, report.info.score, 'the task keeps its score for the task list');
  });

  it('reads the behaviour log once for every module and the signatures: a pipe that can be read only once is enough', { timeout: 60_000 }, async () => {
    const { id, paths } = await newTask();
    const events: BehaviorEvent[] = [
      { ts: 1000, pid: 60, ppid: 1, tid: 60, comm: 'sh', kind: 'process.exec', path: '/tmp/stealer', argv: ['/tmp/stealer'], ret: 0 },
      { ts: 1001, pid: 60, ppid: 1, tid: 60, comm: 'stealer', kind: 'file.open', path: '/etc/shadow', flags: 0, mode: 0, ret: 3 },
      { ts: 1002, pid: 60, ppid: 1, tid: 60, comm: 'stealer', kind: 'tracer.info', tracer: 'ebpf', message: 'armed' },
      { ts: 1003, pid: 60, ppid: 1, tid: 60, comm: 'stealer', kind: 'tracer.lost', count: 5 },
    ];
    const source = join(work, 'once.jsonl');
    writeFileSync(source, events.map((event) => JSON.stringify(event)).join('\n') + '\n');
    const log = join(paths.dir, 'logs', 'events.jsonl');
    execFileSync('mkfifo', [log]);
    // One writer, once: a second reader would wait for a writer that never comes (and the test time out).
    const writer = spawn('sh', ['-c', 'cat "$1" > "$2"', 'sh', source, log], { stdio: 'ignore' });
    try {
      await processTask(ctx, id);
    } finally {
      writer.kill();
    }
    assert.equal((await ctx.stores.tasks.get(id))!.status, 'reported');
    const report = readReport(paths);
    assert.equal(report.info.events_lost, 5, 'info read the tracer notes');
    assert.equal(report.info.tracer, 'ebpf');
    assert.deepEqual(report.behavior!.summary.file_read, ['/etc/shadow'], 'behaviour read the events');
    const shadow = report.signatures.find((match) => match.name === 'credential_shadow');
    assert.equal(shadow?.marks[0]?.type, 'call', 'the signatures read the events');
    assert.deepEqual(report.debug!.errors, []);
  });

  it('records a failing module in debug.errors and keeps every other section', async () => {
    const { id, paths } = await newTask();
    fillResults(paths);
    rmSync(paths.pcap);
    mkdirSync(paths.pcap); // a capture that cannot be read
    await processTask(ctx, id);
    assert.equal((await ctx.stores.tasks.get(id))!.status, 'reported');
    const report = readReport(paths);
    assert.equal(report.network, undefined);
    assert.ok(report.behavior && report.dropped && report.static);
    assert.equal(report.debug!.errors.length, 1);
    assert.match(report.debug!.errors[0]!, /^processing module network failed: .*EISDIR/);
  });

  it('reports a URL task with its URL and without file sections', async () => {
    const { id, paths } = await newTask({ category: 'url', target: 'http://phish.example.test/login', sample_id: null });
    await processTask(ctx, id);
    const report = readReport(paths);
    assert.deepEqual(report.target, { category: 'url', url: 'http://phish.example.test/login' });
    assert.deepEqual(Object.keys(report), ['info', 'target', 'network', 'debug', 'metadata', 'signatures']);
    assert.equal(report.info.category, 'url');
  });

  it('reports a file unpacked from a submitted archive with the archive, as Cuckoo 2.0.7 does', async () => {
    mkdirSync(join(work, 'bundle/bin'), { recursive: true });
    copyFileSync(join(work, 'sample'), join(work, 'bundle/bin/dropper.elf'));
    execFileSync('7z', ['a', '-bd', '../bundle.zip', 'bin'], { cwd: join(work, 'bundle'), stdio: 'ignore' });
    const zip = readFileSync(join(work, 'bundle.zip'));
    const digest = (algorithm: string) => createHash(algorithm).update(zip).digest('hex');
    const archiveId = await ctx.stores.samples.upsert({
      file_size: zip.length, file_type: 'Zip archive data', md5: digest('md5'), crc32: '00000000', sha1: digest('sha1'),
      sha256: digest('sha256'), sha512: digest('sha512'), ssdeep: null,
    });
    writeFileSync(ctx.layout.binary(digest('sha256')), zip);
    const { id, paths } = await newTask({ category: 'archive', archive_id: archiveId, archive_name: 'bundle.zip', archive_member: 'bin/dropper.elf' });
    await processTask(ctx, id);
    const report = readReport(paths);
    assert.equal(report.info.category, 'archive');
    const { target } = report;
    assert.equal(target.category, 'archive');
    assert.equal(target.filename, 'bin/dropper.elf');
    assert.equal(target.human, 'bin/dropper.elf @ bundle.zip');
    assert.equal(target.file!.name, 'dropper.elf');
    assert.equal(target.file!.sha256, sha256(sample));
    const archive = target.archive!;
    assert.deepEqual([archive.name, archive.path, archive.size, archive.md5, archive.sha1, archive.sha256, archive.sha512],
      ['bundle.zip', ctx.layout.binary(digest('sha256')), zip.length, digest('md5'), digest('sha1'), digest('sha256'), digest('sha512')]);
    assert.match(archive.type, /^Zip archive data/);
    assert.match(archive.crc32, /^[0-9A-F]{8}$/);
    assert.ok(Array.isArray(archive.yara) && Array.isArray(archive.urls));
    assert.ok(report.static && report.strings?.some((text) => text.includes('NESTBOX-MARKER-7')), 'the unpacked file is analysed as a file');

    rmSync(ctx.layout.binary(digest('sha256')));
    await ctx.stores.tasks.transition(id, ['reported', 'failed_reporting', 'failed_processing'], 'completed');
    await processTask(ctx, id);
    const gone = readReport(paths).target.archive!;
    assert.deepEqual([gone.path, gone.sha256, gone.size, gone.yara], [null, digest('sha256'), zip.length, []]);
  });

  it('shows the stored hashes when the binary is gone', async () => {
    const { id, paths } = await newTask({ sample_id: sampleId });
    rmSync(ctx.layout.binary(sha256(sample)));
    try {
      await processTask(ctx, id);
      const file = readReport(paths).target.file!;
      assert.equal(file.path, null);
      assert.equal(file.sha256, sha256(sample));
      assert.deepEqual(file.yara, []);
    } finally {
      writeFileSync(ctx.layout.binary(sha256(sample)), sample);
    }
  });

  it('fails the task with the reason when there is nothing to process, and when reports cannot be written', async () => {
    const missing = await newTask();
    rmSync(missing.paths.dir, { recursive: true });
    await processTask(ctx, missing.id);
    assert.equal((await ctx.stores.tasks.get(missing.id))!.status, 'failed_processing');
    const errors = (await ctx.stores.tasks.errorsOf([missing.id])).get(missing.id)!;
    assert.match(errors[0]!.message, /^Processing failed: the analysis folder .* does not exist$/);

    const unwritable = await newTask();
    rmSync(unwritable.paths.reports, { recursive: true });
    writeFileSync(unwritable.paths.reports, 'a file where the reports folder belongs');
    await processTask(ctx, unwritable.id);
    assert.equal((await ctx.stores.tasks.get(unwritable.id))!.status, 'failed_reporting');
    assert.match((await ctx.stores.tasks.errorsOf([unwritable.id])).get(unwritable.id)![0]!.message, /^Writing the reports failed/);
  });

  it("puts a Wine task's Windows calls into the report, the calls index and the summary, among the Linux events", async () => {
    const { id, paths } = await newTask({ target: '/tmp/upload/probe64.exe', package: 'wine', platform: 'windows' });
    const fixture = join(import.meta.dirname, '../../../test/fixtures/wine');
    // The real relay log's run: CLOCK_REALTIME and CLOCK_MONOTONIC_RAW read just before it started.
    const realtime = 1795756712.1063316;
    const monotonic = 62714.589635817;
    const events: BehaviorEvent[] = [
      { ts: realtime + 0.01, pid: 70, ppid: 1, tid: 70, comm: 'sh', kind: 'process.exec', path: '/usr/lib/wine/wine64', argv: ['/usr/lib/wine/wine64', 'C:\\users\\Public\\probe64.exe'], ret: 0 },
      { ts: realtime + 0.02, pid: 70, ppid: 1, tid: 70, comm: 'wine64', kind: 'process.rename', name: 'probe64.exe' },
      { ts: realtime + 0.7, pid: 70, ppid: 1, tid: 70, comm: 'probe64.exe', kind: 'process.exit', code: 0 },
    ];
    writeFileSync(join(paths.dir, 'logs', 'events.jsonl'), events.map((event) => JSON.stringify(event)).join('\n') + '\n');
    mkdirSync(join(paths.dir, 'logs', 'wine'));
    copyFileSync(join(fixture, 'probe64-relay.log'), join(paths.dir, 'logs', 'wine', 'relay.log'));
    writeFileSync(join(paths.dir, 'logs', 'wine', 'clock.json'), JSON.stringify({ realtime, monotonic }));
    await processTask(ctx, id);
    assert.equal((await ctx.stores.tasks.get(id))!.status, 'reported');
    const report = readReport(paths);
    const probe = report.behavior!.processes.find((process) => process.pid === 70)!;
    assert.equal(probe.process_name, 'probe64.exe');
    const apis = probe.calls.map((call) => call.api);
    assert.equal(apis[0], 'execve');
    assert.ok(apis.indexOf('RegSetValueExW') > apis.indexOf('CreateFileW') && apis.at(-1) === 'exit_group', 'in time order among the Linux events');
    assert.ok(report.behavior!.summary.regkey_written!.includes('HKEY_CURRENT_USER\\Software\\Microsoft\\Windows\\CurrentVersion\\Run\\probe'));
    assert.equal(report.behavior!.apistats['70']!.CreateFileW, 2);
    const index = CallsIndex.open(paths.callsIndex)!;
    try {
      const registry = index.calls({ pid: 70, category: 'registry', offset: 0, limit: 100 });
      assert.ok(registry.calls.some((call) => call.api === 'RegSetValueExW'), 'the calls index has the Windows calls');
    } finally {
      index.close();
    }
    assert.deepEqual(report.debug!.errors, []);
  });

  it("puts a Windows guest's behaviour logs (Cuckoo's monitor's, from a double of it) into the report, the calls index and the signatures", async () => {
    const { id, paths } = await newTask({ target: '/tmp/upload/invoice.exe', package: 'exe', platform: 'windows', machine: 'win7' });
    const program = 'C:\\Users\\abecker\\AppData\\Local\\Temp\\invoice.exe';
    const runValue = 'HKEY_CURRENT_USER\\Software\\Microsoft\\Windows\\CurrentVersion\\Run\\invoice';
    const log = new MonitorLogWriter({ pid: 1337, ppid: 1204, modulePath: program, commandLine: `"${program}"`, startMs: Date.now() - 30_000 })
      .call('NtCreateMutant', [['mutant_handle', 0x3c, 'p'], ['desired_access', 0x1f0001, 'i'], ['initial_owner', 0, 'i'], ['mutant_name', 'Global\\invoice-1337']], { t: 3, category: 'synchronisation' })
      .call('RegSetValueExW', [['key_handle', 0x80000001, 'p'], ['regkey_r', 'invoice'], ['reg_type', 1, 'i'], ['value', program], ['regkey', runValue]], { t: 9, category: 'registry', ret: 0 });
    writeFileSync(join(paths.logs, '1337.bson'), log.bytes());
    await processTask(ctx, id);
    assert.equal((await ctx.stores.tasks.get(id))!.status, 'reported');
    const report = readReport(paths);
    assert.deepEqual(report.behavior!.processes.map((process) => [process.pid, process.ppid, process.process_name, process.calls.map((call) => call.api)]), [
      [1337, 1204, 'invoice.exe', ['NtCreateMutant', 'RegSetValueExW']],
    ]);
    assert.deepEqual(report.behavior!.summary.regkey_written, [runValue]);
    assert.ok(report.signatures.some((match) => match.name === 'win_persistence_run_key'), report.signatures.map((match) => match.name).join(', '));
    const index = CallsIndex.open(paths.callsIndex)!;
    try {
      assert.deepEqual(index.calls({ pid: 1337, category: 'registry', offset: 0, limit: 10 }).calls.map((call) => call.api), ['RegSetValueExW']);
    } finally {
      index.close();
    }
    assert.deepEqual(report.debug!.errors, []);
  });

  it('processes only completed tasks and says why not', async () => {
    const { id } = await newTask({ status: 'running' });
    await assert.rejects(processTask(ctx, id), (error: unknown) => isNestboxError(error, 'conflict') && /is running/.test((error as Error).message));
    assert.equal((await ctx.stores.tasks.get(id))!.status, 'running');
    await assert.rejects(processTask(ctx, 999999), (error: unknown) => isNestboxError(error, 'not_found'));
  });
});
