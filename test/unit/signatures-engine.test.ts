import assert from 'node:assert/strict';
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { EVENTS_FILE } from '../../src/report/events.js';
import type { SignatureMatch } from '../../src/report/report-types.js';
import { techniqueOf } from '../../src/signatures/attack.js';
import { runSignatureClasses } from '../../src/signatures/engine.js';
import { PathTable } from '../../src/signatures/helpers/path-table.js';
import { samePath } from '../../src/signatures/helpers/paths.js';
import { runSignatures, scoreOf, SIGNATURES } from '../../src/signatures/index.js';
import { MARK_LIMIT, Signature, type EventOf, type SignatureContext, type SignatureInfo } from '../../src/signatures/signature.js';
import type { AnalysisPaths } from '../../src/storage/layout.js';
import { baseReport, benignScript, emptyNetwork, EventLog, makeAnalysis, O, runScenario } from '../helpers/signatures.js';

const info = (name: string, severity: SignatureInfo['severity'] = 2): SignatureInfo => ({ name, description: name, severity, categories: ['test'], ttp: [] });

/** Records the events it is given; marks every file.delete. */
class DeleteWatcher extends Signature<'file.delete'> {
  static seen: string[] = [];
  readonly info = info('delete_watcher', 3);
  override readonly kinds = ['file.delete'] as const;
  override onEvent(event: EventOf<'file.delete'>, ctx: SignatureContext): void {
    DeleteWatcher.seen.push(`${event.kind} ${event.path}`);
    this.markEvent(event, ctx);
  }
}

/** Asks for no events: only onComplete runs. */
class CompletionOnly extends Signature<never> {
  static completions = 0;
  readonly info = info('completion_only', 1);
  override onComplete(): void {
    CompletionOnly.completions++;
    this.markIoc('test', 'completed');
  }
}

class Thrower extends Signature<'file.delete'> {
  readonly info = info('thrower', 5);
  override readonly kinds = ['file.delete'] as const;
  override onEvent(): void {
    throw new Error('boom');
  }
}

/** Marks each distinct file opened, plus a duplicate of each. */
class OpenMarker extends Signature<'file.open'> {
  readonly info = info('open_marker', 4);
  override readonly kinds = ['file.open'] as const;
  override onEvent(event: EventOf<'file.open'>, ctx: SignatureContext): void {
    this.markEvent(event, ctx);
    this.markIoc('file', event.path);
    this.markIoc('file', event.path);
  }
}

describe('signature engine', () => {
  let analysis: { paths: AnalysisPaths; remove(): void };
  before(() => {
    analysis = makeAnalysis();
  });
  after(() => analysis.remove());

  const writeLog = (text: string) => writeFileSync(join(analysis.paths.dir, EVENTS_FILE), text);
  const run = (classes: Parameters<typeof runSignatureClasses>[0], options = {}) =>
    runSignatureClasses(classes, baseReport(analysis.paths.binary), analysis.paths, options);

  it('gives each signature only the event kinds it asked for, in log order', async () => {
    const log = new EventLog().read(10, '/etc/hosts').add(10, { kind: 'file.delete', path: '/tmp/a', ret: 0 }).connect(10, '192.0.2.1', 80);
    log.add(11, { kind: 'file.delete', path: '/tmp/b', ret: -2 });
    writeLog(log.text());
    DeleteWatcher.seen = [];
    CompletionOnly.completions = 0;
    const matches = await run([DeleteWatcher, CompletionOnly]);
    assert.deepEqual(DeleteWatcher.seen, ['file.delete /tmp/a', 'file.delete /tmp/b']);
    assert.equal(CompletionOnly.completions, 1);
    assert.deepEqual(
      matches.map((match) => match.name),
      ['completion_only', 'delete_watcher'],
      'sorted by ascending severity',
    );
  });

  it('marks calls in Cuckoo\'s shape with the per-process call index', async () => {
    const log = new EventLog().read(20, '/etc/hosts').read(21, '/x').add(20, { kind: 'file.delete', path: '/tmp/a', ret: -13 }, { tid: 22 });
    writeLog(log.text());
    const [match] = await run([DeleteWatcher]);
    assert.ok(match);
    const deleted = log.events[2];
    assert.deepEqual(match.marks, [
      {
        type: 'call',
        pid: 20,
        cid: 1,
        call: { api: 'unlink', category: 'file', time: deleted?.ts, tid: 22, status: false, return_value: -13, repeated: 0, arguments: { path: '/tmp/a' } },
      },
    ]);
    assert.deepEqual(Object.keys(match).sort(), ['categories', 'description', 'families', 'markcount', 'marks', 'name', 'references', 'severity', 'ttp']);
  });

  it(`keeps the first ${MARK_LIMIT} marks, counts them all and counts a repeated mark once`, async () => {
    const log = new EventLog();
    for (let index = 0; index < 40; index++) log.read(30, `/data/${index}`).read(30, `/data/${index}`);
    writeLog(log.text());
    const [match] = await run([OpenMarker]);
    assert.equal(match?.markcount, 80, '40 distinct calls and 40 distinct IOCs');
    assert.equal(match?.marks.length, MARK_LIMIT);
  });

  it('skips lines that are not events and still reads the rest', async () => {
    const good = new EventLog().add(40, { kind: 'file.delete', path: '/tmp/ok', ret: 0 }).events[0];
    writeLog(
      [
        'not json',
        '{"kind":"file.delete"}',
        JSON.stringify({ ...good, path: 42 }),
        JSON.stringify({ ...good, kind: 'process.exec', argv: 'sh -c x', path: '/bin/sh' }),
        '[1,2,3]',
        '',
        JSON.stringify(good),
        '{"ts":1,"pid":40,"ppid":1,"tid":40,"comm":"x","kind":"file.del', // torn last line
      ].join('\n'),
    );
    DeleteWatcher.seen = [];
    const matches = await run([DeleteWatcher]);
    assert.deepEqual(DeleteWatcher.seen, ['file.delete /tmp/ok']);
    assert.equal(matches.length, 1);
  });

  it('runs completion-only signatures when there is no behaviour log', async () => {
    const empty = makeAnalysis();
    try {
      CompletionOnly.completions = 0;
      const matches = await runSignatureClasses([DeleteWatcher, CompletionOnly], baseReport(empty.paths.binary), empty.paths);
      assert.deepEqual(matches.map((match) => match.name), ['completion_only']);
    } finally {
      empty.remove();
    }
  });

  it('drops a signature that throws, reports it, and keeps the others', async () => {
    writeLog(new EventLog().add(50, { kind: 'file.delete', path: '/tmp/a', ret: 0 }).add(50, { kind: 'file.delete', path: '/tmp/b', ret: 0 }).text());
    const errors: string[] = [];
    DeleteWatcher.seen = [];
    const matches = await run([Thrower, DeleteWatcher], { onError: (name: string, error: unknown) => errors.push(`${name}: ${(error as Error).message}`) });
    assert.deepEqual(errors, ['thrower: boom'], 'reported once, then left out');
    assert.deepEqual(matches.map((match) => match.name), ['delete_watcher']);
    assert.equal(DeleteWatcher.seen.length, 2);
  });

  it('streams a large log, handing out only the kinds asked for', async () => {
    const events = 100_000;
    const lines: string[] = [];
    for (let index = 0; index < events; index++) {
      const body = index % 1000 === 0 ? { kind: 'file.delete', path: `/tmp/${index}`, ret: 0 } : { kind: 'file.open', path: `/usr/lib/lib${index % 300}.so`, flags: O.RDONLY, mode: 0, ret: 3 };
      lines.push(JSON.stringify({ ts: 1_700_000_000 + index / 1000, pid: 60 + (index % 8), ppid: 1, tid: 60, comm: 'x', ...body }));
    }
    writeLog(lines.join('\n') + '\n');
    DeleteWatcher.seen = [];
    const matches = await runSignatureClasses([DeleteWatcher, ...SIGNATURES], baseReport(analysis.paths.binary), analysis.paths);
    assert.equal(DeleteWatcher.seen.length, events / 1000);
    assert.equal(matches.find((match) => match.name === 'delete_watcher')?.markcount, events / 1000);
  });
});

describe('PathTable', () => {
  it('finds the earliest known path naming the same file, as a scan with samePath does', () => {
    const known = ['/tmp/a/../x.sh', 'x.sh', '/tmp//y', '/var/tmp/z', 'dir/z', '/tmp/x.sh', '', '/opt/w/'];
    const table = new PathTable<number>(100);
    known.forEach((path, index) => table.set(path, index));
    table.set('/tmp//y', 99); // a new value keeps the path's place
    const scan = (query: string) => {
      const index = known.findIndex((path) => samePath(path, query));
      return index < 0 ? undefined : index === 2 ? 99 : index;
    };
    for (const query of ['/tmp/x.sh', '/x.sh', 'x.sh', '/tmp/y', '/tmp/./y', 'y', '/usr/z', 'z', '/opt/w', 'w', '', '/nothing', 'nothing']) {
      assert.equal(table.find(query), scan(query), query);
    }
  });

  it('holds no more paths than its limit', () => {
    const table = new PathTable<number>(2);
    for (const path of ['/a', '/b', '/c']) table.set(path, 1);
    assert.equal(table.has('/b'), true);
    assert.equal(table.has('/c'), false);
    assert.equal(table.find('/c'), undefined);
  });
});

describe('the shipped signatures', () => {
  const all = SIGNATURES.map((SignatureType) => new SignatureType().info);

  it('ship at least 40 signatures with unique snake_case names', () => {
    assert.ok(all.length >= 40, `${all.length} signatures`);
    assert.equal(new Set(all.map((item) => item.name)).size, all.length);
    for (const item of all) assert.match(item.name, /^[a-z0-9]+(_[a-z0-9]+)*$/);
  });

  it('declare a severity from 1 to 5, categories, a description and known ATT&CK techniques', () => {
    for (const item of all) {
      assert.ok(Number.isInteger(item.severity) && item.severity >= 1 && item.severity <= 5, item.name);
      assert.ok(item.categories.length > 0 && item.description.length > 10, item.name);
      for (const id of item.ttp) assert.ok(techniqueOf(id), `${item.name}: unknown technique ${id}`);
    }
  });

  it('each have a test that makes them match', () => {
    // Signature tests are unit tests, but those that need a real capture are system tests.
    const folders = ['unit', 'system'].map((folder) => fileURLToPath(new URL(`../${folder}/`, import.meta.url)));
    const testSources = folders
      .flatMap((folder) => readdirSync(folder).filter((file) => /^signatures-.*\.test\.js$/.test(file) && !file.startsWith('signatures-engine')).map((file) => join(folder, file)))
      .map((file) => readFileSync(file, 'utf8'))
      .join('\n');
    const untested = all.filter((item) => !testSources.includes(`signature: '${item.name}'`)).map((item) => item.name);
    assert.deepEqual(untested, []);
  });

  it('give a ttp object with technique names', async () => {
    const { named } = await runScenario({ events: new EventLog().read(70, '/etc/shadow') });
    assert.deepEqual(named('credential_shadow')?.ttp, {
      'T1003.008': { short: 'OS Credential Dumping: /etc/passwd and /etc/shadow', long: techniqueOf('T1003.008')?.long },
    });
  });

  it('find nothing above informational in an ordinary script that lists a folder and writes a file', async () => {
    const { matches } = await runScenario({ events: benignScript() });
    assert.deepEqual(matches.filter((match) => match.severity >= 2).map((match) => match.name), []);
    assert.ok(scoreOf(matches) < 1);
  });

  it('find nothing above informational in a script that downloads a page over HTTPS and saves it', async () => {
    const events = benignScript()
      .fork(100, 103)
      .exec(103, '/usr/bin/curl', ['curl', '-sSo', '/tmp/page.html', 'https://deb.debian.org/'])
      .read(103, '/etc/resolv.conf')
      .connect(103, '192.0.2.80', 443)
      .write(103, '/tmp/page.html', 9000)
      .exec(104, '/bin/uname', ['uname', '-r']);
    const network = {
      ...emptyNetwork(),
      hosts: ['192.0.2.80'],
      dns: [{ request: 'deb.debian.org', type: 'A', answers: [{ type: 'A', data: '192.0.2.80' }] }],
      domains: [{ domain: 'deb.debian.org', ip: '192.0.2.80' }],
      tcp: [{ src: '10.13.0.2', sport: 40000, dst: '192.0.2.80', dport: 443, offset: 24, time: 1.2 }],
      tls: [{ dst: '192.0.2.80', dport: 443, sni: 'deb.debian.org' }],
    };
    const { matches } = await runScenario({ events, report: { network } });
    assert.deepEqual(matches.filter((match) => match.severity >= 2).map((match) => match.name), []);
    assert.ok(matches.some((match) => match.name === 'system_info_discovery'), 'uname is noted as information');
    assert.ok(scoreOf(matches) < 1);
  });

  it('score a script that sleeps past the sandbox (sleep cut short) and then writes a file at most 1, with nothing above suspicious', async () => {
    const events = benignScript().fork(100, 105).exec(105, '/bin/sleep', ['sleep', '90']).add(105, { kind: 'process.sleep', seconds: 90, ret: 0 }, { api: 'clock_nanosleep' });
    const debug = { log: [], cuckoo: [], action: [], errors: [], skipped_sleeps: [{ pid: 105, call: 'clock_nanosleep', seconds: 90, time: 1_700_000_001 }] };
    const { matches } = await runScenario({ events, report: { debug } });
    assert.deepEqual(matches.map((match) => match.name).sort(), ['long_sleep', 'sleep_evasion']);
    assert.ok(scoreOf(matches) <= 1, String(scoreOf(matches)));
  });

  it('score an installer unpacking a tarball into /opt and a tar backup at most 1, with nothing above suspicious', async () => {
    const events = new EventLog().exec(110, '/bin/sh', ['sh', '/tmp/install.sh']).fork(110, 111).exec(111, '/bin/tar', ['tar', 'xzf', '/tmp/app.tar.gz', '-C', '/opt/app']);
    events.read(111, '/tmp/app.tar.gz');
    for (let index = 0; index < 60; index++) events.open(111, `/opt/app/share/f${index}.dat`, O.WRONLY | O.CREAT | 0o200).add(111, { kind: 'file.write', path: `/opt/app/share/f${index}.dat`, bytes: 4096 });
    events.add(111, { kind: 'file.chmod', path: '/opt/app/bin/app', mode: 0o755, ret: 0 });
    events.fork(110, 112).exec(112, '/bin/tar', ['tar', 'czf', '/tmp/backup.tgz', '/opt/app']);
    for (let index = 0; index < 60; index++) events.read(112, `/opt/app/share/f${index}.dat`);
    events.write(112, '/tmp/backup.tgz', 200_000);
    const { matches } = await runScenario({ events });
    assert.deepEqual(matches.filter((match) => match.severity >= 3).map((match) => match.name), []);
    assert.ok(scoreOf(matches) <= 1, `${scoreOf(matches)}: ${matches.map((match) => match.name).join(', ')}`);
  });

  it('write a signature failure into debug.errors through runSignatures', async () => {
    const empty = makeAnalysis();
    try {
      const report = baseReport(empty.paths.binary, { debug: { log: [], cuckoo: [], action: [], errors: [] }, static: null as never });
      // A report whose sections are malformed must not stop the engine: the broken signature is reported.
      (report as unknown as { strings: unknown }).strings = 42;
      const matches = await runSignatures(report, empty.paths);
      assert.ok(Array.isArray(matches));
      assert.ok(report.debug?.errors.some((error) => /^Signature (packed_binary|miner_stratum) failed: /.test(error)), JSON.stringify(report.debug?.errors));
    } finally {
      empty.remove();
    }
  });
});

describe('scoreOf', () => {
  const matches = (...severities: number[]) => severities.map((severity) => ({ severity }) as SignatureMatch);

  it('is 0 without matches and stays below 1 for any number of informational ones', () => {
    assert.equal(scoreOf([]), 0);
    assert.equal(scoreOf(matches(1)), 0.1);
    assert.equal(scoreOf(matches(1, 1, 1, 1, 1, 1, 1, 1, 1, 1)), 0.3);
  });

  it('keeps a benign-looking mix (two suspicious matches, many informational) at 1 or below', () => {
    assert.equal(scoreOf(matches(2)), 0.5);
    assert.equal(scoreOf(matches(2, 2, 1, 1, 1, 1, 1)), 1);
  });

  it('sets the level by the strongest match, so severity 3 or more is 5 or more, and adds the others, up to 10', () => {
    assert.equal(scoreOf(matches(3)), 5);
    assert.equal(scoreOf(matches(4)), 6.5);
    assert.equal(scoreOf(matches(5)), 8);
    assert.equal(scoreOf(matches(1, 2, 3)), 5.3);
    assert.equal(scoreOf(matches(2, 2, 2, 2, 2, 2, 2, 2, 2, 2)), 2.3, 'suspicious matches alone never reach a verdict');
    assert.equal(scoreOf(matches(5, 4, 4, 3, 3)), 10);
  });
});
