import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { once } from 'node:events';
import { mkdirSync, readdirSync, readFileSync, symlinkSync, truncateSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { startTestServer, type TestServer } from '../helpers/server.js';

/** report.json as the JSON reporting module writes it: indent 4, unsorted keys. */
const REPORT = {
  info: { score: 2.4, id: 1 },
  target: { category: 'file' },
  procmemory: [{ pid: 1 }],
  behavior: { generic: [], apistats: {}, processes: [], summary: { file_opened: ['/etc/hosts'] }, processtree: [] },
  debug: { log: [] },
  screenshots: [{ path: 'shots/0001.jpg', ocr: '' }],
  metadata: { output: {} },
  signatures: [],
  strings: ['caf\u00e9'],
  empty_list: [],
  zero: 0,
  nothing: null,
};
const REPORT_TEXT = JSON.stringify(REPORT, null, 4);
const SAMPLE = 'sample bytes';
const SHA256 = 'a'.repeat(64);

/** Lays out storage/analyses/<id>/ exactly as an analysis leaves it. */
function layOutAnalysis(server: TestServer, id: number, binaryTarget: string) {
  const paths = server.ctx.layout.analysis(id);
  paths.create();
  writeFileSync(paths.reportJson, REPORT_TEXT);
  writeFileSync(paths.taskJson, '{"id": 1}');
  writeFileSync(paths.taskLog, 'log line\n');
  writeFileSync(paths.pcap, 'PCAP');
  writeFileSync(paths.memoryDump, 'FULL MEMORY');
  writeFileSync(join(paths.files, '0123456789abcdef_dropped.txt'), 'dropped');
  writeFileSync(join(paths.memory, '1234-1.dmp'), 'DUMP');
  writeFileSync(join(paths.shots, '0001.jpg'), 'JPEG1');
  writeFileSync(join(paths.shots, '0002.jpg'), 'JPEG2');
  writeFileSync(join(paths.shots, '0001_small.jpg'), 'THUMB');
  writeFileSync(join(paths.shots, '0003.png'), 'PNG3');
  writeFileSync(join(paths.packageFiles, 'pkg.txt'), 'pkg');
  symlinkSync(binaryTarget, paths.binary);
  // A link below the top level must never pull outside files into an archive.
  symlinkSync('/etc/passwd', join(paths.files, 'escape'));
  return paths;
}

const tarList = (archive: Buffer, flag: string) =>
  execFileSync('tar', [`-t${flag}f`, '-'], { input: archive }).toString().split('\n').filter(Boolean);

const tarMember = (archive: Buffer, flag: string, member: string) =>
  execFileSync('tar', [`-x${flag}Of`, '-', member], { input: archive }).toString();

/** Name and compression method of each zip entry, read with Python's zipfile module. */
function zipEntries(archive: Buffer): Array<[string, number]> {
  const script = 'import sys, io, zipfile, json; z = zipfile.ZipFile(io.BytesIO(sys.stdin.buffer.read())); print(json.dumps([[i.filename, i.compress_type] for i in z.infolist()]))';
  return JSON.parse(execFileSync('python3', ['-c', script], { input: archive }).toString());
}

describe('GET /tasks/report', () => {
  let server: TestServer;
  before(async () => {
    server = await startTestServer();
    const binary = server.ctx.layout.binary(SHA256);
    writeFileSync(binary, SAMPLE);
    layOutAnalysis(server, 1, binary);
    const withHtml = layOutAnalysis(server, 2, join(server.home, 'no-such-binary'));
    writeFileSync(withHtml.reportHtml, '<html>report</html>');
    mkdirSync(server.ctx.layout.analysis(3).dir);
    // A sparse 1 GiB file: archiving it takes long enough for a client to give up half way.
    const big = server.ctx.layout.analysis(4);
    big.create();
    writeFileSync(join(big.files, 'big.bin'), '');
    truncateSync(join(big.files, 'big.bin'), 1024 ** 3);
  });
  after(() => server.close());

  const download = async (path: string) => {
    const response = await server.fetch(path);
    return { response, body: Buffer.from(await response.arrayBuffer()) };
  };

  it('serves report.json byte for byte, by default and as json in any case, under /v1 too', async () => {
    for (const path of ['/tasks/report/1', '/tasks/report/1/json', '/tasks/report/1/JSON', '/v1/tasks/report/1/Json']) {
      const { response, body } = await download(path);
      assert.equal(response.status, 200, path);
      assert.equal(response.headers.get('content-type'), 'application/json');
      assert.equal(body.toString(), REPORT_TEXT);
    }
  });

  it('serves report.html when it exists, else 404 "Report not found"', async () => {
    const { response, body } = await download('/tasks/report/2/html');
    assert.equal(response.headers.get('content-type'), 'text/html; charset=utf-8');
    assert.equal(body.toString(), '<html>report</html>');
    for (const path of ['/tasks/report/1/html', '/tasks/report/3', '/tasks/report/999', '/tasks/report/999/html']) {
      const { status, body: error } = await server.json(path);
      assert.equal(status, 404, path);
      assert.deepEqual(error, { message: 'Report not found' });
    }
  });

  it('answers one top-level key for ?elements=, serialised like Python json.dumps', async () => {
    const cases: Array<[string, string]> = [
      ['info', '{"id": 1, "score": 2.4}'],
      ['strings', '["caf\\u00e9"]'],
      ['empty_list', '[]'],
      ['zero', '0'],
      ['behavior', '{"apistats": {}, "generic": [], "processes": [], "processtree": [], "summary": {"file_opened": ["/etc/hosts"]}}'],
    ];
    for (const [key, expected] of cases) {
      const { response, body } = await download(`/tasks/report/1?elements=${key}`);
      assert.equal(response.status, 200, key);
      assert.equal(response.headers.get('content-type'), 'application/json');
      assert.equal(body.toString(), expected);
    }
  });

  it('answers 404 for a missing, null or dotted element, and for elements of the HTML report', async () => {
    for (const key of ['nothing', 'missing', 'behavior.summary', 'constructor', '__proto__']) {
      const { status, body } = await server.json(`/tasks/report/1/json?elements=${key}`);
      assert.equal(status, 404, key);
      assert.deepEqual(body, { message: `'${key}' not found` });
    }
    const { status, body } = await server.json('/tasks/report/2/html?elements=info');
    assert.equal(status, 404);
    assert.deepEqual(body, { message: 'Get specific field is not available in HTML format, try again with JSON format' });
    assert.deepEqual((await server.json('/tasks/report/999?elements=info')).body, { message: 'Report not found' });
  });

  it('answers 400 "Invalid report format" for any other format', async () => {
    for (const format of ['pdf', 'zip', 'maec', 'json2', '%2e%2e%2fjson', 'all%00', 'constructor', '__proto__', 'toString', 'hasOwnProperty']) {
      const { status, body } = await server.json(`/tasks/report/1/${format}`);
      assert.equal(status, 400, format);
      assert.deepEqual(body, { message: 'Invalid report format' });
    }
  });

  it('streams the whole analysis folder as tar.bz2, without memory.dmp, with the sample in place of the binary link', async () => {
    const { response, body } = await download('/tasks/report/1/all');
    assert.equal(response.status, 200);
    assert.equal(response.headers.get('content-type'), 'application/x-tar; charset=UTF-8');
    assert.equal(response.headers.get('content-disposition'), null);
    assert.equal(body.subarray(0, 3).toString(), 'BZh');
    assert.deepEqual(tarList(body, 'j'), [
      'binary',
      'buffer/',
      'cuckoo.log',
      'dump.pcap',
      'extracted/',
      'files/',
      'files/0123456789abcdef_dropped.txt',
      'logs/',
      'memory/',
      'memory/1234-1.dmp',
      'package_files/',
      'package_files/pkg.txt',
      'reports/',
      'reports/report.json',
      'shots/',
      'shots/0001.jpg',
      'shots/0001_small.jpg',
      'shots/0002.jpg',
      'shots/0003.png',
      'task.json',
    ]);
    assert.equal(tarMember(body, 'j', 'binary'), SAMPLE);
    assert.equal(tarMember(body, 'j', 'reports/report.json'), REPORT_TEXT);
  });

  it('skips a dangling binary link', async () => {
    const names = tarList((await download('/tasks/report/2/all')).body, 'j');
    assert.ok(!names.includes('binary'));
    assert.ok(names.includes('reports/report.html'));
  });

  it('streams dropped files and package files alone, under /v1 too', async () => {
    assert.deepEqual(tarList((await download('/tasks/report/1/dropped')).body, 'j'), ['files/', 'files/0123456789abcdef_dropped.txt']);
    assert.deepEqual(tarList((await download('/v1/tasks/report/1/PACKAGE_FILES')).body, 'j'), ['package_files/', 'package_files/pkg.txt']);
  });

  it('compresses as ?tar= asks: gz, tar (none), and bz2 for anything else', async () => {
    const gz = (await download('/tasks/report/1/dropped?tar=gz')).body;
    assert.deepEqual([gz[0], gz[1]], [0x1f, 0x8b]);
    assert.deepEqual(tarList(gz, 'z'), ['files/', 'files/0123456789abcdef_dropped.txt']);
    const plain = await download('/tasks/report/1/dropped?tar=tar');
    assert.equal(plain.response.headers.get('content-type'), 'application/x-tar; charset=UTF-8');
    assert.equal(plain.body.subarray(257, 262).toString(), 'ustar');
    assert.deepEqual(tarList(plain.body, ''), ['files/', 'files/0123456789abcdef_dropped.txt']);
    for (const word of ['rar', 'constructor', '__proto__', 'GZ']) {
      assert.equal((await download(`/tasks/report/1/dropped?tar=${word}`)).body.subarray(0, 3).toString(), 'BZh', word);
    }
  });

  it('answers an empty archive when nothing matches, and 404 when there is no analysis folder', async () => {
    const { response, body } = await download('/tasks/report/3/dropped?tar=tar');
    assert.equal(response.status, 200);
    assert.deepEqual(tarList(body, ''), []);
    const missing = await server.json('/tasks/report/999/all');
    assert.equal(missing.status, 404);
    assert.deepEqual(missing.body, { message: 'Report not found' });
  });

  it('leaves no tar process behind after a HEAD request or a download the client gives up', async () => {
    const head = await server.fetch('/tasks/report/4/all?tar=tar', { method: 'HEAD' });
    assert.equal(head.status, 200);
    assert.equal(head.headers.get('content-type'), 'application/x-tar; charset=UTF-8');
    assert.equal(await head.text(), '');
    // node:http rather than fetch: after an abort, fetch opens a spare connection that delays server.close().
    const request = http.get(`${server.url}/tasks/report/4/all?tar=tar`, { agent: false });
    const response = await once(request, 'response').then(([r]) => r as http.IncomingMessage);
    assert.equal(response.statusCode, 200);
    await once(response, 'readable');
    assert.match(childProcesses(), /\btar\b/, 'the archive is still being made');
    request.destroy();
    let children = '';
    for (let attempt = 0; attempt < 50; attempt++) {
      children = childProcesses();
      if (!/\btar\b/.test(children)) break;
      await sleep(100);
    }
    assert.doesNotMatch(children, /\btar\b/);
  });
});

/** Commands of this process's children (tar and its compressors, while an archive is made), from /proc. */
function childProcesses(): string {
  const names: string[] = [];
  for (const pid of readdirSync('/proc').filter((name) => /^\d+$/.test(name))) {
    try {
      const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
      // comm is in parentheses and may hold spaces; the parent pid is the second field after it.
      const close = stat.lastIndexOf(')');
      const ppid = Number(stat.slice(close + 2).split(' ')[1]);
      if (ppid === process.pid) names.push(stat.slice(stat.indexOf('(') + 1, close));
    } catch {
      // the process ended while we looked
    }
  }
  return names.join('\n');
}

describe('GET /tasks/summary', () => {
  let server: TestServer;
  before(async () => {
    server = await startTestServer();
    layOutAnalysis(server, 1, '/nonexistent');
    const partial = server.ctx.layout.analysis(2);
    partial.create();
    // No procmemory: Cuckoo would then remove nothing at all.
    writeFileSync(partial.reportJson, JSON.stringify({ info: { id: 2 }, behavior: { generic: [], summary: {} }, metadata: {}, debug: {} }));
  });
  after(() => server.close());

  it('answers the report without the bulky keys, re-serialised as the API JSON', async () => {
    const response = await server.fetch('/tasks/summary/1');
    assert.equal(response.status, 200);
    assert.equal(response.headers.get('content-type'), 'application/json');
    const text = await response.text();
    assert.match(text, /^\{\n {2}"behavior": \{\n/);
    assert.ok(text.endsWith('}\n'));
    assert.deepEqual(JSON.parse(text), {
      info: { id: 1, score: 2.4 },
      target: { category: 'file' },
      behavior: { summary: { file_opened: ['/etc/hosts'] }, processtree: [] },
      signatures: [],
      strings: ['caf\u00e9'],
      empty_list: [],
      zero: 0,
      nothing: null,
    });
  });

  it('removes every listed key that exists, even when an earlier one is missing', async () => {
    assert.deepEqual((await server.json('/tasks/summary/2')).body, { info: { id: 2 }, behavior: { summary: {} } });
  });

  it('answers 404 "Report not found" without a report, and has no /v1 alias', async () => {
    for (const path of ['/tasks/summary/3', '/tasks/summary/0']) {
      const { status, body } = await server.json(path);
      assert.equal(status, 404);
      assert.deepEqual(body, { message: 'Report not found' });
    }
    assert.equal((await server.fetch('/v1/tasks/summary/1')).status, 404);
  });
});

describe('GET /tasks/screenshots', () => {
  let server: TestServer;
  before(async () => {
    server = await startTestServer();
    layOutAnalysis(server, 1, '/nonexistent');
    server.ctx.layout.analysis(2).create();
  });
  after(() => server.close());

  it('serves one screenshot by its exact stem, under /v1 too', async () => {
    for (const [path, type, content] of [
      ['/tasks/screenshots/1/0001', 'image/jpeg', 'JPEG1'],
      ['/v1/tasks/screenshots/1/0002', 'image/jpeg', 'JPEG2'],
      ['/tasks/screenshots/1/0001_small', 'image/jpeg', 'THUMB'],
      ['/tasks/screenshots/1/0003', 'image/png', 'PNG3'],
    ]) {
      const response = await server.fetch(path!);
      assert.equal(response.status, 200, path);
      assert.equal(response.headers.get('content-type'), type);
      assert.equal(await response.text(), content);
    }
  });

  it('answers 404 "Screenshot not found!" for any other stem', async () => {
    for (const stem of ['1', '0001.jpg', '0009', 'shots']) {
      const { status, body } = await server.json(`/tasks/screenshots/1/${stem}`);
      assert.equal(status, 404, stem);
      assert.deepEqual(body, { message: 'Screenshot not found!' });
    }
  });

  it('zips every screenshot, stored without compression', async () => {
    const response = await server.fetch('/v1/tasks/screenshots/1');
    assert.equal(response.status, 200);
    assert.equal(response.headers.get('content-type'), 'application/zip');
    assert.equal(response.headers.get('content-disposition'), null);
    assert.deepEqual(zipEntries(Buffer.from(await response.arrayBuffer())), [
      ['0001.jpg', 0],
      ['0001_small.jpg', 0],
      ['0002.jpg', 0],
      ['0003.png', 0],
    ]);
  });

  it('answers an empty zip for an analysis without screenshots, and 404 "Task not found" without a shots folder', async () => {
    const empty = Buffer.from(await (await server.fetch('/tasks/screenshots/2')).arrayBuffer());
    assert.equal(empty.length, 22);
    assert.deepEqual(zipEntries(empty), []);
    for (const path of ['/tasks/screenshots/3', '/tasks/screenshots/3/0001']) {
      const { status, body } = await server.json(path);
      assert.equal(status, 404);
      assert.deepEqual(body, { message: 'Task not found' });
    }
  });

  it('answers HEAD with the zip headers and no body', async () => {
    const response = await server.fetch('/tasks/screenshots/1', { method: 'HEAD' });
    assert.equal(response.status, 200);
    assert.equal(response.headers.get('content-type'), 'application/zip');
    assert.equal(await response.text(), '');
  });
});
