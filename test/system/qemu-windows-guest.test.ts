import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, it } from 'node:test';
import { Uint8ArrayReader, ZipReader } from '@zip.js/zip.js';
import { pino } from 'pino';
import { configSchema } from '../../src/config/schema.js';
import { isNestboxError } from '../../src/errors.js';
import { defaultDroppedFileLimits } from '../../src/machinery/dropped/budget.js';
import { AgentClient } from '../../src/machinery/qemu/agent-client.js';
import { runWithAgentOnly } from '../../src/machinery/qemu/agent-only-run.js';
import { CuckooResultServer } from '../../src/machinery/qemu/cuckoo-result-server.js';
import { createQemuMachinery } from '../../src/machinery/qemu/index.js';
import { ANALYSIS_MAC, AGENT_MAC } from '../../src/machinery/qemu/machine-args.js';
import { WindowsGuestAnalyzer, type WindowsGuestOptions } from '../../src/machinery/qemu/windows-guest.js';
import type { AnalysisRequest } from '../../src/machinery/types.js';
import { AnalysisPaths } from '../../src/storage/layout.js';
import { analysisRequest } from '../helpers/analysis-request.js';
import { WindowsAgentDouble } from '../helpers/cuckoo-windows-agent.js';
import { behaviorSectionOf } from '../helpers/behavior-section.js';
import { MonitorLogWriter } from '../helpers/cuckoo-monitor-log.js';
import { runSignatures } from '../../src/signatures/index.js';
import { baseReport, emptyNetwork } from '../helpers/signatures.js';

/**
 * How nestbox drives a Windows guest on a qemu machine: Cuckoo 2.0.7's way, through Cuckoo's agent, with
 * Cuckoo's Windows analyzer. No Windows image can exist on this host, so the guest is a PROTOCOL-LEVEL
 * TEST DOUBLE (test/helpers/cuckoo-windows-agent.ts) of an outside system: Cuckoo 2.0.7's agent in a
 * Windows guest, answering on loopback as one does (Windows environment and paths, execpy, zip
 * extraction). What Cuckoo's analyzer then does in the guest is played by a stand-in below: it reads the
 * analysis.conf it was given and sends results to the result server it names, in Cuckoo's result
 * protocol, then reports its status to the agent. The operator's Cuckoo working directory is likewise
 * a stand-in with placeholder files where Cuckoo's analyzer and monitor would be, and the behaviour log the
 * stand-in sends is written by a double of Cuckoo's monitor (test/helpers/cuckoo-monitor-log.ts).
 * The host side is nestbox's own and real: agent client, analyzer upload, result server.
 */
const log = pino({ level: 'silent' });
const CARDS = [
  { name: 'Local Area Connection', mac: AGENT_MAC },
  { name: 'Local Area Connection 2', mac: ANALYSIS_MAC },
];
const RUN_VALUE = 'HKEY_CURRENT_USER\\Software\\Microsoft\\Windows\\CurrentVersion\\Run\\invoice';

/** What Cuckoo's monitor would log of the sample (pid 1337): it persists itself under the Run key. */
function monitorLog(samplePath: string): MonitorLogWriter {
  return new MonitorLogWriter({ pid: 1337, ppid: 1204, modulePath: samplePath, commandLine: `"${samplePath}" /q`, startMs: Date.UTC(2026, 10, 27, 5, 0, 1) })
    .call('NtCreateMutant', [['mutant_handle', 0x3c, 'p'], ['desired_access', 0x1f0001, 'i'], ['initial_owner', 0, 'i'], ['mutant_name', 'Global\\invoice-1337']], { t: 3, category: 'synchronisation' })
    .call('RegSetValueExW', [['key_handle', 0x80000001, 'p'], ['regkey_r', 'invoice'], ['reg_type', 1, 'i'], ['value', samplePath], ['regkey', RUN_VALUE]], { t: 9, category: 'registry', ret: 0 });
}

const SAMPLE = Buffer.concat([Buffer.from('MZ\x90\x00'), Buffer.alloc(60), Buffer.from('a stand-in for a Windows program')]);

let work: string;
let cuckooCwd: string;
let paths: AnalysisPaths;
let samplePath: string;

beforeEach(() => {
  work = mkdtempSync(join(tmpdir(), 'nestbox-windows-guest-'));
  cuckooCwd = join(work, 'cuckoo-cwd');
  writeTree(cuckooCwd, {
    'analyzer/windows/analyzer.py': '# placeholder for Cuckoo 2.0.7\'s Windows analyzer\n',
    'analyzer/windows/lib/core/config.py': '# placeholder\n',
    'analyzer/windows/modules/packages/exe.py': '# placeholder\n',
    'monitor/latest': '7a4f2e0c\n',
    'monitor/7a4f2e0c/monitor-x86.dll': 'placeholder monitor (32-bit)',
    'monitor/7a4f2e0c/inject-x86.exe': 'placeholder injector',
    'monitor/0ld0ld/monitor-x86.dll': 'an older monitor that must not be sent',
    'stuff/dumpmem.yarac': 'placeholder compiled rules',
  });
  paths = new AnalysisPaths(join(work, 'task'));
  paths.create();
  mkdirSync(join(work, 'submitted'));
  samplePath = join(work, 'submitted', 'invoice 100%.exe');
  writeFileSync(samplePath, SAMPLE);
});

afterEach(() => rmSync(work, { recursive: true, force: true }));

/** What Cuckoo's analyzer does in the guest, as far as the host can see it. */
async function analyzerStandIn({ cwd, guest }: { cwd: string; guest: WindowsAgentDouble }, ending: { status: string; description: string }): Promise<void> {
  const conf = parseConf(guest.file(`${cwd}\\analysis.conf`)!.toString('utf8'));
  const sample = guest.file(`${guest.environ.TEMP}\\${conf.file_name}`);
  const results = { ip: conf.ip!, port: Number(conf.port) };
  await send(results, Buffer.from(`LOG\n2026-11-27 05:00:00,000 [analyzer] INFO: Starting analyzer from: ${cwd}\nsample found: ${sample?.length ?? 'no'} bytes\n`));
  const behaviour = monitorLog(conf.target!);
  await send(results, Buffer.concat([behaviour.header(), behaviour.bytes()]));
  await send(results, Buffer.from('FILE 2\nfiles/3958214766/note.txt\nC:\\Users\\abecker\\AppData\\Roaming\\note.txt\n1337\nyour files are encrypted'));
  await send(results, Buffer.from(`FILE 2\nmemory/1337-1.dmp\n\n1337\n${'M'.repeat(4096)}`));
  await send(results, Buffer.from('FILE 2\nshots/0001.jpg\n\n\n\xff\xd8\xff\xe0'));
  await send(results, Buffer.from('FILE 2\n../../etc/passwd\n\n\nnot to be written'));
  guest.report(ending.status, ending.description);
}

describe('a Windows guest on a qemu machine, driven as Cuckoo 2.0.7 drives one (against a double of its agent)', () => {
  let guest: WindowsAgentDouble | undefined;
  let results: CuckooResultServer | undefined;
  afterEach(async () => {
    await guest?.stop();
    await results?.close();
  });

  async function run(options: { ending?: { status: string; description: string }; request?: Partial<AnalysisRequest> } = {}) {
    const ending = options.ending ?? { status: 'complete', description: 'True' };
    guest = new WindowsAgentDouble({ cards: CARDS, onExecpy: (started) => analyzerStandIn(started, ending) });
    const agent = new AgentClient(await guest.start(), 10_000);
    results = await CuckooResultServer.listen({ host: '127.0.0.1', port: 0 }, {
      paths,
      uploads: { maxFiles: 10, maxFileBytes: 1 << 20, maxTotalBytes: 4 << 20 },
      droppedFiles: defaultDroppedFileLimits(),
      logLimitBytes: 1 << 20,
      behaviourLimitBytes: 1 << 20,
    });
    const warnings: string[] = [];
    const request = analysisRequest('win7', { taskId: 42, paths, samplePath, timeoutSeconds: 5, log, options: { free: 'yes', arguments: '/q' }, ...options.request });
    const guestOptions: WindowsGuestOptions = {
      agent,
      request,
      cuckooCwd,
      monitor: 'latest',
      resultServer: { ip: '127.0.0.1', port: results.port },
      collectGraceSeconds: 2,
      card: { mac: ANALYSIS_MAC, address: '10.200.3.2', prefix: 30, gateway: '10.200.3.1', dns: '10.200.3.1', resultLink: { address: '169.254.42.2', prefix: 30 } },
      warn: (message) => warnings.push(message),
    };
    const analyzer = new WindowsGuestAnalyzer(guestOptions);
    await analyzer.start();
    const ended = await analyzer.waitForEnd(new AbortController().signal);
    await guest.stop();
    const summary = await results.close();
    results = undefined;
    return { ended, warnings, summary, analyzer, guest, request };
  }

  it('pins the agent, reads its environment, sets the analysis card, unpacks the analyzer on the system drive and starts it with execpy', async () => {
    const { ended, analyzer, guest } = await run();
    assert.equal(ended, 'exited');
    assert.match(analyzer.analyzerDir, /^C:\\tmp[a-z0-9_]{6}$/, 'a new folder in the root of the system drive, as Cuckoo makes it');
    const dir = analyzer.analyzerDir;
    assert.deepEqual(guest.steps, [
      'GET /',
      'GET /pinning',
      'GET /environ',
      'POST /execute',
      'POST /execute',
      'POST /execute',
      'POST /execute',
      'POST /mkdtemp',
      'POST /extract',
      'POST /store',
      'POST /store',
      'POST /execpy',
    ]);
    const posted = guest.requests.filter((request) => request.method === 'POST' && request.path !== '/status');
    assert.deepEqual(posted.slice(0, 4).map((request) => request.fields.command), [
      'getmac /v /fo csv /nh',
      'netsh interface ipv4 set address name="Local Area Connection 2" static 10.200.3.2 255.255.255.252 10.200.3.1',
      'netsh interface ipv4 set dnsservers name="Local Area Connection 2" static 10.200.3.1 primary',
      'netsh interface ipv4 add address name="Local Area Connection 2" 169.254.42.2 255.255.255.252',
    ]);
    const [mkdtemp, extract, conf, sample, execpy] = posted.slice(4);
    assert.equal(mkdtemp!.fields.dirpath, 'C:\\');
    assert.equal(extract!.fields.dirpath, dir);
    assert.deepEqual([conf, sample].map((request) => request!.fields.filepath), [
      `${dir}\\analysis.conf`,
      'C:\\Users\\abecker\\AppData\\Local\\Temp\\invoice 100%.exe',
    ]);
    assert.deepEqual(execpy!.fields, { filepath: `${dir}\\analyzer.py`, async: '1', cwd: dir });
    assert.deepEqual(guest.file('c:/users/ABECKER/appdata/local/temp/INVOICE 100%.EXE'), SAMPLE, 'the sample is where the analyzer looks: %TEMP%\\<file_name>');
  });

  it('sends Cuckoo\'s analyzer with the current monitor under bin\\, as Cuckoo\'s host packs it', async () => {
    const { guest, analyzer } = await run();
    const zip = guest.requests.find((request) => request.path === '/extract')!.files.zipfile!;
    const names = (await new ZipReader(new Uint8ArrayReader(zip)).getEntries()).map((entry) => entry.filename).sort();
    assert.deepEqual(names, ['analyzer.py', 'bin/inject-x86.exe', 'bin/monitor-x86.dll', 'bin/rules.yarac', 'lib/core/config.py', 'modules/packages/exe.py']);
    const unpacked = [...guest.filesUnder(analyzer.analyzerDir).keys()].sort();
    assert.ok(unpacked.includes(`${analyzer.analyzerDir}\\bin\\monitor-x86.dll`));
    assert.equal(guest.file(`${analyzer.analyzerDir}\\bin\\monitor-x86.dll`)!.toString(), 'placeholder monitor (32-bit)');
  });

  it('writes analysis.conf as Cuckoo\'s host does: one [analysis] section, line feeds, % doubled for ConfigParser', async () => {
    const { guest, analyzer, request } = await run();
    const text = guest.file(`${analyzer.analyzerDir}\\analysis.conf`)!.toString('utf8');
    assert.ok(!text.includes('\r'), 'Cuckoo\'s host joins the lines with a bare line feed');
    assert.equal(text.split('\n')[0], '[analysis]');
    const conf = parseConf(text);
    const fileType = execFileSync('file', ['--brief', samplePath], { encoding: 'utf8', env: { ...process.env, LC_ALL: 'C' } }).trim();
    assert.deepEqual(conf, {
      file_name: 'invoice 100%.exe',
      file_type: fileType,
      pe_exports: '',
      id: '42',
      ip: '127.0.0.1',
      port: conf.port,
      category: 'file',
      target: 'C:\\Users\\abecker\\AppData\\Local\\Temp\\invoice 100%.exe',
      package: '',
      options: 'free=yes,arguments=/q',
      enforce_timeout: 'False',
      clock: request.clock.replace(/^(\d{4})-(\d{2})-(\d{2})T(\d{2}:\d{2}:\d{2}).*$/, '$1$2$3T$4'),
      terminate_processes: 'False',
      timeout: '5',
    });
    assert.match(text, /^file_name = invoice 100%%\.exe$/m);
  });

  it('takes the analyzer\'s log, behaviour logs, dropped files and memory dumps into the task folder, as from a Linux guest', async () => {
    const { summary } = await run();
    assert.match(readFileSync(paths.analysisLog, 'utf8'), new RegExp(`Starting analyzer from: C:\\\\tmp[a-z0-9_]{6}\nsample found: ${SAMPLE.length} bytes\n`));
    assert.deepEqual(readFileSync(join(paths.logs, '1337.bson')), monitorLog('C:\\Users\\abecker\\AppData\\Local\\Temp\\invoice 100%.exe').bytes(), 'the behaviour log as the monitor wrote it, after its header line');
    const sha256 = createHash('sha256').update('your files are encrypted').digest('hex');
    const dropped = summary.uploads.entries.find((entry) => entry.path?.startsWith('files/'))!;
    assert.equal(dropped.path, `files/${sha256.slice(0, 16)}_note.txt`);
    assert.equal(dropped.filepath, 'C:\\Users\\abecker\\AppData\\Roaming\\note.txt');
    assert.equal(readFileSync(join(paths.dir, dropped.path!), 'utf8'), 'your files are encrypted');
    assert.deepEqual(summary.uploads.entries.find((entry) => entry.path?.startsWith('memory/')), { path: 'memory/1337-1.dmp', filepath: null, pids: [1337] });
    assert.equal(readFileSync(join(paths.memory, '1337-1.dmp')).length, 4096);
    assert.deepEqual(readdirSync(paths.shots), [], 'screenshots come from the machine\'s display, not from the guest');
    assert.ok(summary.warnings.some((warning) => /outside Cuckoo's result folders/.test(warning)), 'an upload aimed elsewhere is refused');
    assert.ok(!readdirSync(paths.dir).some((name) => name.startsWith('.cuckoo-upload')), 'no upload is left half-way');
  });

  it('gives the report the behaviour the guest\'s monitor logged, and the Windows signatures fire on it', async () => {
    await run();
    const section = await behaviorSectionOf(paths);
    const target = 'C:\\Users\\abecker\\AppData\\Local\\Temp\\invoice 100%.exe';
    assert.deepEqual(section.processes.map((process) => [process.pid, process.ppid, process.process_name, process.process_path, process.command_line]), [
      [1337, 1204, 'invoice 100%.exe', target, `"${target}" /q`],
    ]);
    assert.deepEqual(section.processes[0]!.calls.map((call) => [call.api, call.category, call.status]), [['NtCreateMutant', 'synchronisation', true], ['RegSetValueExW', 'registry', true]]);
    assert.deepEqual(section.summary.regkey_written, [RUN_VALUE]);
    assert.deepEqual(section.summary.mutex, ['Global\\invoice-1337']);
    const signatures = await runSignatures(baseReport(paths.binary, { behavior: section, network: emptyNetwork() }), paths);
    assert.ok(signatures.some((match) => match.name === 'win_persistence_run_key'), signatures.map((match) => match.name).join(', '));
  });

  it('ends the run as an error, with the last lines of its traceback, when Cuckoo\'s analyzer reports an exception', async () => {
    const traceback = 'Traceback (most recent call last):\n  File "C:\\tmpx\\analyzer.py", line 812, in <module>\nCuckooPackageError: Unable to execute the initial process';
    const { ended, warnings } = await run({ ending: { status: 'exception', description: traceback } });
    assert.equal(ended, 'error');
    assert.deepEqual(warnings, ['the analyzer failed: Traceback (most recent call last): /   File "C:\\tmpx\\analyzer.py", line 812, in <module> / CuckooPackageError: Unable to execute the initial process']);
  });

  it('stores a URL task\'s URL in analysis.conf as its target, and no sample', async () => {
    const { guest, analyzer } = await run({ request: { category: 'url', url: 'http://example.test/a?b=100%', samplePath: undefined } });
    const conf = parseConf(guest.file(`${analyzer.analyzerDir}\\analysis.conf`)!.toString('utf8'));
    assert.equal(conf.category, 'url');
    assert.equal(conf.target, 'http://example.test/a?b=100%');
    assert.equal(conf.file_name, undefined);
    assert.equal(guest.requests.filter((request) => request.path === '/store').length, 1, 'only analysis.conf is stored');
  });
});

describe('a Windows guest with the agent only (analyzer: none), against the same double', () => {
  it('gives the analysis card the task address, stores the sample in %TEMP% and starts it through the shell', async () => {
    const guest = new WindowsAgentDouble({ cards: CARDS });
    try {
      const agent = new AgentClient(await guest.start(), 10_000);
      const request = analysisRequest('win7', { taskId: 43, paths, samplePath, timeoutSeconds: 1, log });
      const network = { mac: ANALYSIS_MAC, address: '10.200.9.2', prefix: 30, gateway: '10.200.9.1' };
      const warnings = await runWithAgentOnly(agent, request, network, new AbortController().signal);
      assert.deepEqual(warnings, []);
      const commands = guest.requests.filter((sent) => sent.path === '/execute').map((sent) => sent.fields);
      assert.deepEqual(commands.map((fields) => fields.command), [
        'getmac /v /fo csv /nh',
        'netsh interface ipv4 set address name="Local Area Connection 2" static 10.200.9.2 255.255.255.252 10.200.9.1',
        'netsh interface ipv4 set dnsservers name="Local Area Connection 2" static 10.200.9.1 primary',
        'start "" "C:\\Users\\abecker\\AppData\\Local\\Temp\\invoice 100%.exe"',
      ]);
      assert.deepEqual({ shell: commands[3]!.shell, async: commands[3]!.async }, { shell: '1', async: '1' });
      assert.deepEqual(guest.file('C:\\Users\\abecker\\AppData\\Local\\Temp\\invoice 100%.exe'), SAMPLE);
    } finally {
      await guest.stop();
    }
  });
});

describe('the result server for Cuckoo\'s protocol', () => {
  it('keeps no upload still arriving when the task ends, and says so', async () => {
    const results = await CuckooResultServer.listen({ host: '127.0.0.1', port: 0 }, {
      paths,
      uploads: { maxFiles: 10, maxFileBytes: 1 << 20, maxTotalBytes: 4 << 20 },
      droppedFiles: defaultDroppedFileLimits(),
      logLimitBytes: 1 << 20,
      behaviourLimitBytes: 1 << 20,
    });
    const socket = connect(results.port, '127.0.0.1');
    socket.on('error', () => undefined);
    socket.write('FILE 2\nfiles/1/half.bin\nC:\\half.bin\n\nthe first half');
    await new Promise((resolve) => setTimeout(resolve, 200));
    const summary = await results.close();
    socket.destroy();
    assert.deepEqual(summary.uploads.entries, []);
    assert.ok(summary.warnings.some((warning) => /files\/1\/half\.bin was still arriving when the task ended/.test(warning)), summary.warnings.join('; '));
    assert.deepEqual(readdirSync(paths.files), []);
  });
});

describe('a qemu machine of platform windows', () => {
  it('is refused, as a configuration error naming it, without a Cuckoo working directory holding the Windows analyzer', async () => {
    for (const cwd of ['', join(work, 'not-cuckoo')]) {
      const settings = { accel: 'tcg', disk: join(work, 'win7.qcow2'), state: join(work, 'win7.state'), cuckoo_cwd: cwd };
      const machinery = createQemuMachinery(configSchema.parse({ machines: [{ name: 'win7', kind: 'qemu', platform: 'windows', settings }] }), log);
      await assert.rejects(machinery.prepare(), (error: unknown) => isNestboxError(error, 'invalid_config') && /machine win7: .*cuckoo_cwd/.test(error.message));
    }
  });
});


/** analysis.conf read as Python 2's ConfigParser reads it (`%%` is one `%`). */
function parseConf(text: string): Record<string, string> {
  const values: Record<string, string> = {};
  for (const line of text.split(/\r?\n/).slice(1)) {
    const match = /^([^=\s]+) = ?(.*)$/.exec(line);
    if (match) values[match[1]!] = match[2]!.replaceAll('%%', '%');
  }
  return values;
}

function send(to: { ip: string; port: number }, data: Buffer): Promise<void> {
  return new Promise((resolve) => {
    const socket = connect(to.port, to.ip, () => socket.end(data));
    // The server may refuse (and reset) a connection before reading all of it: that is an answer too.
    socket.on('close', () => resolve());
    socket.on('error', () => undefined);
  });
}

function writeTree(root: string, files: Record<string, string>): void {
  for (const [name, content] of Object.entries(files)) {
    mkdirSync(join(root, name, '..'), { recursive: true });
    writeFileSync(join(root, name), content);
  }
}
