import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { it } from 'node:test';
import type { BehaviorEvent, EventBody } from '../../src/report/events.js';
import { EVENTS_FILE } from '../../src/report/events.js';
import type { NetworkSection, Report, SignatureMatch } from '../../src/report/report-types.js';
import { runSignatures } from '../../src/signatures/index.js';
import { AnalysisPaths } from '../../src/storage/layout.js';

/** A real analysis folder in the temp directory, laid out as the storage layout makes it. */
export function makeAnalysis(): { paths: AnalysisPaths; remove(): void } {
  const dir = mkdtempSync(join(tmpdir(), 'nestbox-sig-'));
  const paths = new AnalysisPaths(dir);
  paths.create();
  return { paths, remove: () => rmSync(dir, { recursive: true, force: true }) };
}

/**
 * Builds events exactly as the tracer writes them (report/events.ts): every line carries ts, pid, ppid, tid
 * and comm, and time moves forward 10 ms per event unless `at` says otherwise.
 */
export class EventLog {
  readonly events: BehaviorEvent[] = [];
  #clock = 1_700_000_000;

  add(pid: number, body: EventBody, options: { ppid?: number; comm?: string; tid?: number; at?: number; api?: string } = {}): this {
    this.#clock = options.at ?? this.#clock + 0.01;
    const api = options.api === undefined ? {} : { api: options.api };
    this.events.push({ ts: this.#clock, pid, ppid: options.ppid ?? 1, tid: options.tid ?? pid, comm: options.comm ?? 'sample', ...api, ...body } as BehaviorEvent);
    return this;
  }

  /** A system call decoded with its arguments (`system.call`), named `api`. */
  call(pid: number, api: string, args: Record<string, number | string> = {}, ret = 0): this {
    return this.add(pid, { kind: 'system.call', args, ret }, { api });
  }

  exec(pid: number, path: string, argv: string[], ret = 0): this {
    return this.add(pid, { kind: 'process.exec', path, argv, ret });
  }

  fork(pid: number, child: number): this {
    return this.add(pid, { kind: 'process.fork', child });
  }

  open(pid: number, path: string, flags: number, ret = 3): this {
    return this.add(pid, { kind: 'file.open', path, flags, mode: 0o644, ret });
  }

  read(pid: number, path: string): this {
    return this.open(pid, path, O.RDONLY);
  }

  /** open(O_WRONLY|O_CREAT|O_TRUNC) then a write, as `echo x > path` does. */
  write(pid: number, path: string, bytes = 64): this {
    return this.open(pid, path, O.WRONLY | O.CREAT | O.TRUNC).add(pid, { kind: 'file.write', path, bytes });
  }

  append(pid: number, path: string, bytes = 64): this {
    return this.open(pid, path, O.WRONLY | O.CREAT | O.APPEND).add(pid, { kind: 'file.write', path, bytes });
  }

  connect(pid: number, address: string, port: number, options: { ret?: number; at?: number } = {}): this {
    const family = address.includes(':') ? 'inet6' : 'inet';
    this.add(pid, { kind: 'net.socket', family, type: 1, protocol: 6, ret: 3 }, { at: options.at });
    return this.add(pid, { kind: 'net.connect', fd: 3, family, address, port, ret: options.ret ?? 0 });
  }

  text(): string {
    return this.events.map((event) => JSON.stringify(event)).join('\n') + '\n';
  }
}

/** Linux open(2) flags. */
export const O = { RDONLY: 0, WRONLY: 0o1, RDWR: 0o2, CREAT: 0o100, TRUNC: 0o1000, APPEND: 0o2000, CLOEXEC: 0o2000000 } as const;

export function emptyNetwork(): NetworkSection {
  return { mitm: [], hosts: [], domains: [], dns: [], tcp: [], udp: [], icmp: [], http: [], tls: [], smtp: [], irc: [], dns_servers: [], dead_hosts: [] };
}

/** The sections every report has, for a file task with a sample at `binaryPath`. */
export function baseReport(binaryPath: string, sections: Partial<Report> = {}): Report {
  return {
    info: {
      id: 1,
      version: '2.0.7',
      category: 'file',
      package: 'generic',
      platform: 'linux',
      custom: '',
      owner: '',
      options: '',
      route: 'none',
      added: 1_700_000_000,
      started: 1_700_000_001,
      ended: 1_700_000_031,
      duration: 30,
      machine: {},
      score: 0,
    },
    target: {
      category: 'file',
      file: {
        name: 'sample.bin',
        path: binaryPath,
        size: 0,
        crc32: '00000000',
        md5: '',
        sha1: '',
        sha256: '',
        sha512: '',
        ssdeep: null,
        type: 'data',
        yara: [],
        urls: [],
      },
    },
    signatures: [],
    ...sections,
  };
}

export interface Scenario {
  events?: EventLog;
  /** Report sections; a function when they must name files inside the analysis folder. */
  report?: Partial<Report> | ((paths: AnalysisPaths) => Partial<Report>);
  /** Files to put into the analysis folder (relative path -> content), e.g. 'binary' or 'dump.pcap'. */
  files?: Record<string, string | Buffer>;
}

/** Runs every shipped signature on a scenario written to a real analysis folder. */
export async function runScenario(scenario: Scenario): Promise<{ matches: SignatureMatch[]; named(name: string): SignatureMatch | undefined; names: string[] }> {
  const analysis = makeAnalysis();
  try {
    const { paths } = analysis;
    for (const [relative, content] of Object.entries(scenario.files ?? {})) writeFileSync(join(paths.dir, relative), content);
    if (scenario.events) writeFileSync(join(paths.dir, EVENTS_FILE), scenario.events.text());
    const sections = typeof scenario.report === 'function' ? scenario.report(paths) : scenario.report;
    const report = baseReport(paths.binary, sections);
    const matches = await runSignatures(report, paths);
    return { matches, named: (name) => matches.find((match) => match.name === name), names: matches.map((match) => match.name) };
  } finally {
    analysis.remove();
  }
}

/**
 * The events of an ordinary, harmless shell script run as a sample: it lists a folder and writes a file
 * under /tmp, with the library loading and locale lookups such programs really do.
 */
export function benignScript(): EventLog {
  const log = new EventLog();
  log.exec(100, '/bin/sh', ['sh', '/tmp/sample.sh']);
  for (const lib of ['/etc/ld.so.cache', '/lib/x86_64-linux-gnu/libc.so.6']) log.open(100, lib, O.RDONLY | O.CLOEXEC);
  log.read(100, '/tmp/sample.sh');
  log.fork(100, 101);
  log.exec(101, '/bin/ls', ['ls', '-la', '/tmp']);
  for (const path of ['/etc/ld.so.cache', '/lib/x86_64-linux-gnu/libselinux.so.1', '/lib/x86_64-linux-gnu/libc.so.6', '/proc/filesystems', '/usr/lib/locale/locale-archive', '/etc/nsswitch.conf', '/etc/passwd', '/etc/group', '/tmp']) {
    log.open(101, path, O.RDONLY | O.CLOEXEC);
  }
  log.add(101, { kind: 'process.exit', code: 0 });
  log.write(100, '/tmp/listing.txt', 512);
  log.fork(100, 102);
  log.exec(102, '/bin/cat', ['cat', '/tmp/listing.txt']);
  log.read(102, '/tmp/listing.txt');
  log.add(102, { kind: 'process.exit', code: 0 });
  log.add(100, { kind: 'process.exit', code: 0 });
  return log;
}

export interface SignatureCase {
  signature: string;
  title: string;
  scenario: () => Scenario;
  /** false: the case must NOT match (benign look-alikes). */
  matches?: boolean;
}

/** One test per case: the signature matches with marks (or, for `matches: false`, does not match). */
export function signatureCases(cases: readonly SignatureCase[]): void {
  for (const testCase of cases) {
    const expectMatch = testCase.matches ?? true;
    it(`${testCase.signature} ${expectMatch ? 'matches' : 'does not match'}: ${testCase.title}`, async () => {
      const result = await runScenario(testCase.scenario());
      const match = result.named(testCase.signature);
      if (!expectMatch) {
        assert.equal(match, undefined, `${testCase.signature} matched: ${JSON.stringify(match?.marks)}`);
        return;
      }
      assert.ok(match, `${testCase.signature} did not match; matched: ${result.names.join(', ') || 'nothing'}`);
      assert.ok(match.marks.length > 0 && match.markcount >= match.marks.length);
    });
  }
}
