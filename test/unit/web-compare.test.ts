import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
// The Compare page's own diff code, compiled by this project's tsc as well as bundled for the browser.
import { compareReports } from '../../web/src/compare/report-diff.js';
import { diffSets } from '../../web/src/compare/set-diff.js';

describe('Compare: set diff', () => {
  it('splits two lists into both, only left and only right, sorted by key, each key once', () => {
    const diff = diffSets(['b', 'a', 'c', 'a'], ['d', 'c', 'b'], (item) => item);
    assert.deepEqual(diff, { same: ['b', 'c'], onlyLeft: ['a'], onlyRight: ['d'] });
  });

  it('keeps the first item of a key, and handles empty sides', () => {
    const left = [
      { k: 'x', n: 1 },
      { k: 'x', n: 2 },
    ];
    assert.deepEqual(diffSets(left, [], (item) => item.k), { same: [], onlyLeft: [{ k: 'x', n: 1 }], onlyRight: [] });
    assert.deepEqual(diffSets([], [], String), { same: [], onlyLeft: [], onlyRight: [] });
  });
});

describe('Compare: two reports', () => {
  const left = {
    info: { id: 1, score: 6.5 },
    signatures: [
      { name: 'dropper', severity: 2, description: 'drops a file' },
      { name: 'network_http', severity: 1, description: 'HTTP' },
    ],
    behavior: {
      processes: [
        { pid: 100, ppid: 1, process_name: 'sh', command_line: 'sh -c ./x' },
        { pid: 101, ppid: 100, process_name: 'curl', command_line: 'curl http://a.test/' },
      ],
      summary: { file_written: ['/tmp/a'], file_created: ['/tmp/b'] },
    },
    dropped: [{ filepath: '/tmp/a', sha256: 'aa', size: 3 }],
    network: { domains: [{ domain: 'a.test', ip: '10.0.0.1' }], hosts: ['10.0.0.1'], http: [{ method: 'GET', uri: 'http://a.test/' }] },
  };
  const right = {
    info: { id: 2, score: 2 },
    signatures: [{ name: 'network_http', severity: 1 }],
    behavior: {
      // Other pids, same program and command line: the same process.
      processes: [{ pid: 200, ppid: 1, process_name: 'sh', command_line: 'sh -c ./x' }],
      summary: { file_written: ['/tmp/a'] },
    },
    dropped: [{ filepath: '/tmp/a', sha256: 'bb', size: 4 }],
    network: { domains: [{ domain: 'b.test' }], hosts: ['10.0.0.1'], http: [{ host: 'b.test', port: 8080, path: '/x' }] },
  };

  it('compares score, signatures and processes (by name and command line, not pid)', () => {
    const diff = compareReports(left, right);
    assert.deepEqual(diff.score, { left: 6.5, right: 2 });
    assert.deepEqual(diff.signatures.same.map((s) => s.name), ['network_http']);
    assert.deepEqual(diff.signatures.onlyLeft, [{ name: 'dropper', severity: 2, description: 'drops a file' }]);
    assert.deepEqual(diff.signatures.onlyRight, []);
    assert.deepEqual(diff.processes.same, [{ name: 'sh', commandLine: 'sh -c ./x' }]);
    assert.deepEqual(diff.processes.onlyLeft, [{ name: 'curl', commandLine: 'curl http://a.test/' }]);
  });

  it('compares files (a dropped file with other content differs) and network', () => {
    const diff = compareReports(left, right);
    assert.deepEqual(diff.dropped.same, []);
    assert.deepEqual(diff.dropped.onlyLeft, [{ path: '/tmp/a', sha256: 'aa', size: 3 }]);
    assert.deepEqual(diff.dropped.onlyRight, [{ path: '/tmp/a', sha256: 'bb', size: 4 }]);
    assert.deepEqual(diff.written, { same: ['/tmp/a'], onlyLeft: ['/tmp/b'], onlyRight: [] });
    assert.deepEqual(diff.domains, { same: [], onlyLeft: ['a.test'], onlyRight: ['b.test'] });
    assert.deepEqual(diff.hosts, { same: ['10.0.0.1'], onlyLeft: [], onlyRight: [] });
    assert.deepEqual(diff.http, { same: [], onlyLeft: ['GET http://a.test/'], onlyRight: ['GET b.test:8080/x'] });
  });

  it('reads a report with no sections as empty', () => {
    const diff = compareReports({}, { signatures: [{ name: 'x' }] });
    assert.deepEqual(diff.score, { left: null, right: null });
    assert.deepEqual(diff.signatures.onlyRight, [{ name: 'x', severity: 0, description: '' }]);
    assert.deepEqual(diff.processes, { same: [], onlyLeft: [], onlyRight: [] });
  });
});
