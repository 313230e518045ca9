import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { after, before, describe, it } from 'node:test';
import { isNestboxError } from '../../src/errors.js';
import type { Report } from '../../src/report/report-types.js';
import { jsonChunks, writeJsonReport } from '../../src/reporting/json.js';
import type { AnalysisPaths } from '../../src/storage/layout.js';
import { baseReport, makeAnalysis } from '../helpers/signatures.js';

/** Python's own json module, with Python 2's separators, as the reference for Cuckoo's jsondump output. */
function pythonDump(value: unknown): string {
  const script = 'import json,sys\nsys.stdout.write(json.dumps(json.loads(sys.stdin.read()), indent=4, separators=(", ", ": "), ensure_ascii=True))';
  return execFileSync('/usr/bin/python3', ['-c', script], { input: JSON.stringify(value), encoding: 'utf8', maxBuffer: 256 << 20 });
}

describe('report.json writer', () => {
  let analysis: { paths: AnalysisPaths; remove(): void };
  before(() => {
    analysis = makeAnalysis();
  });
  after(() => analysis.remove());

  it('writes the bytes Python\'s json.dump(indent=4) writes, as Cuckoo\'s jsondump does', async () => {
    const report = baseReport(analysis.paths.binary, {
      behavior: {
        processes: [],
        processtree: [],
        generic: [],
        summary: { command_line: ['sh -c "echo héllo ☃ 𝄞"', 'tab\there', 'nul\u0000 del\u007f'] },
        anomaly: [],
        apistats: { '100': { openat: 3 } },
      },
      signatures: [],
      strings: ['<script>"quoted"\\ back', ''],
    });
    report.info.started = 1_553_810_186.098672;
    await writeJsonReport(report, analysis.paths.reportJson);
    const written = readFileSync(analysis.paths.reportJson, 'utf8');
    assert.equal(written, pythonDump(report));
    assert.match(written, /^\{\n {4}"info": \{\n {8}"id": 1, \n/);
    assert.ok(written.includes('\\u00e9') && written.includes('\\u2603') && written.includes('\\ud834\\udd1e'), 'non-ASCII as \\u escapes');
    assert.ok(/^[\x00-\x7f]*$/.test(written), 'pure ASCII');
    assert.deepEqual(JSON.parse(written), JSON.parse(JSON.stringify(report)));
    assert.deepEqual(readdirSync(analysis.paths.reports), ['report.json'], 'no temporary file left');
  });

  it('streams a large report in pieces and writes it whole', async () => {
    const calls = Array.from({ length: 200_000 }, (_, index) => ({
      api: 'openat',
      category: 'file' as const,
      time: 1_700_000_000 + index / 1000,
      tid: 100,
      status: true,
      return_value: 3,
      repeated: 0,
      arguments: { path: `/usr/lib/lib${index}.so`, flags: 524288 },
    }));
    const report: Report = baseReport(analysis.paths.binary, {
      behavior: {
        processes: [{ type: 'process', pid: 100, ppid: 1, process_name: 'big', process_path: '/tmp/big', command_line: './big', first_seen: 1_700_000_000, track: true, modules: [], calls }],
        processtree: [],
        generic: [],
        summary: {},
        anomaly: [],
        apistats: {},
      },
    });
    let pieces = 0;
    let largest = 0;
    for (const piece of jsonChunks(report)) {
      pieces++;
      largest = Math.max(largest, piece.length);
    }
    assert.ok(pieces > 100, `${pieces} pieces`);
    assert.ok(largest < 256 * 1024, `largest piece ${largest} characters`);
    await writeJsonReport(report, analysis.paths.reportJson);
    const parsed = JSON.parse(readFileSync(analysis.paths.reportJson, 'utf8')) as Report;
    assert.equal(parsed.behavior?.processes[0]?.calls.length, 200_000);
    assert.deepEqual(parsed.behavior?.processes[0]?.calls[199_999], calls[199_999]);
  });

  it('leaves undefined fields out and writes what JSON cannot hold as null', async () => {
    const value = { kept: 1, gone: undefined, list: [undefined, Number.NaN, Infinity, 2n], when: new Date(0) };
    assert.equal([...jsonChunks(value)].join(''), '{\n    "kept": 1, \n    "list": [\n        null, \n        null, \n        null, \n        2\n    ], \n    "when": "1970-01-01T00:00:00.000Z"\n}');
  });

  it('refuses a report that contains itself, leaving no file behind', async () => {
    const fresh = makeAnalysis();
    try {
      const report = baseReport(fresh.paths.binary) as Report & { loop?: unknown };
      const loop: Record<string, unknown> = {};
      loop.self = loop;
      report.loop = loop;
      await assert.rejects(writeJsonReport(report, fresh.paths.reportJson), (error) => isNestboxError(error, 'internal'));
      assert.equal(existsSync(fresh.paths.reportJson), false);
      assert.deepEqual(readdirSync(fresh.paths.reports), []);
    } finally {
      fresh.remove();
    }
  });
});
