import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { once } from 'node:events';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import autocannon from 'autocannon';
import { pino } from 'pino';
import { createContext } from '../src/app.js';
import { loadConfig } from '../src/config/load.js';
import { startService, waitForLine } from './cli-service.js';
import { cpuSecondsOf } from './helpers/process-cpu.js';
import type { NewTask } from '../src/db/schema.js';

/**
 * API throughput against a bare Node HTTP server answering the same bytes, and the service's memory
 * while it receives a 1 GiB upload. The service runs as the real CLI (`start --no-engine`) in a child
 * process, the bare server in another, so neither shares a thread with the load generator. Everything
 * stays on 127.0.0.1. It prints figures; missed aims do not fail it.
 *
 *   node dist/bench/api.js
 */

const CONNECTIONS = 10;
const DURATION_S = 4;
const WARMUP_S = 1;
const LISTED_TASKS = 50;
const UPLOAD_BYTES = 1024 ** 3;
const UPLOAD_TIMEOUT_MS = 60_000;
const OVERALL_LIMIT_MS = 150_000;
const AIMS = { ratio: 0.5, rssMB: 150 };
const BOUNDARY = 'nestboxbenchboundary';
const SMALL_FILE = Buffer.from('#!/bin/sh\necho bench\n');

interface Scenario {
  name: string;
  method: 'GET' | 'POST';
  path: string;
  headers?: Record<string, string>;
  body?: Buffer;
}

async function main(): Promise<void> {
  if (process.argv[2] === '--bare-server') return bareServer(process.argv[3]!);
  const home = mkdtempSync(join(tmpdir(), 'nestbox-bench-api-'));
  const children: ChildProcess[] = [];
  const limit = setTimeout(() => {
    console.error(`bench: gave up after ${OVERALL_LIMIT_MS / 1000} s`);
    for (const child of children) child.kill('SIGKILL');
    rmSync(home, { recursive: true, force: true });
    process.exit(2);
  }, OVERALL_LIMIT_MS);
  limit.unref();
  try {
    const viewId = await seed(home);
    const service = await startService(home);
    children.push(service.child);
    const scenarios = describeScenarios(viewId);
    const bare = await startBareServer(home, service.url, scenarios);
    children.push(bare.child);
    // The upload goes first, so its memory figures are not inflated by the heap the load tests grow.
    await measureUpload(service.url, service.child.pid!);
    // Its gigabyte of dirty pages would otherwise be written out during the first load test.
    execFileSync('sync');
    await compareThroughput(scenarios, { url: service.url, pid: service.child.pid! }, { url: bare.url, pid: bare.child.pid! });
  } finally {
    for (const child of children) child.kill('SIGTERM');
    await Promise.all(children.map((child) => (child.exitCode === null ? once(child, 'exit') : undefined)));
    rmSync(home, { recursive: true, force: true });
    clearTimeout(limit);
  }
}

/** A home with a configuration and 50 finished tasks, written straight into its database. */
async function seed(home: string): Promise<number> {
  writeFileSync(join(home, 'config.yaml'), 'api:\n  token: ""\nmachines: []\nlogging:\n  level: warn\n');
  const { config } = loadConfig(home, {});
  const ctx = await createContext({ config, home, log: pino({ level: 'silent' }) });
  try {
    const sampleId = await ctx.stores.samples.upsert({
      file_size: 20,
      file_type: 'POSIX shell script, ASCII text executable',
      md5: 'd'.repeat(32),
      crc32: '0BADC0DE',
      sha1: 'e'.repeat(40),
      sha256: 'f'.repeat(64),
      sha512: 'a'.repeat(128),
      ssdeep: '3:abc:def',
    });
    let last = 0;
    for (let i = 0; i < LISTED_TASKS; i++) {
      last = await ctx.stores.tasks.insert(benchTask(sampleId, i));
      await ctx.stores.guests.create(last, { name: 'linux1', label: 'linux1' }, 'LinuxNamespaces');
      await ctx.stores.tasks.addError(last, `warning ${i}`);
    }
    return last;
  } finally {
    await ctx.close();
  }
}

function benchTask(sampleId: number, i: number): NewTask {
  const at = new Date(Date.UTC(2026, 0, 1, 10, 0, i)).toISOString();
  return {
    target: `/tmp/bench/sample-${i}.sh`,
    category: 'file',
    timeout: 60,
    priority: 2,
    custom: '',
    owner: 'bench',
    machine: '',
    package: 'generic',
    platform: 'linux',
    tags: '["bench"]',
    options: 'route=none,procmemdump=yes',
    memory: 0,
    enforce_timeout: 0,
    clock: at,
    added_on: at,
    started_on: at,
    completed_on: at,
    status: 'reported',
    sample_id: sampleId,
  };
}

function describeScenarios(viewId: number): Scenario[] {
  const upload = multipartPrefix('sample.sh');
  return [
    { name: `GET /tasks/view/<id>`, method: 'GET', path: `/tasks/view/${viewId}` },
    { name: `GET /tasks/list (${LISTED_TASKS} tasks)`, method: 'GET', path: '/tasks/list' },
    {
      name: 'POST /tasks/create/file',
      method: 'POST',
      path: '/tasks/create/file',
      headers: { 'content-type': `multipart/form-data; boundary=${BOUNDARY}` },
      body: Buffer.concat([upload, SMALL_FILE, multipartSuffix()]),
    },
  ];
}

/** The bare server answers each scenario with the bytes the service gave for it. */
async function startBareServer(home: string, serviceUrl: string, scenarios: Scenario[]) {
  const answers: Record<string, string> = {};
  for (const scenario of scenarios) {
    const response = await fetch(serviceUrl + scenario.path, { method: scenario.method, headers: scenario.headers, body: scenario.body });
    answers[`${scenario.method} ${scenario.path}`] = response.status === 200 ? await response.text() : '{\n  "task_id": 1\n}\n';
  }
  const file = join(home, 'bare-answers.json');
  writeFileSync(file, JSON.stringify(answers));
  const child = spawn(process.execPath, [fileURLToPath(import.meta.url), '--bare-server', file], { stdio: ['ignore', 'pipe', 'inherit'] });
  const line = await waitForLine(child, /^port \d+/);
  return { child, url: `http://127.0.0.1:${line.split(' ')[1]}` };
}

/** The baseline: node:http, no framework, no database, precomputed encoded bodies; request bodies are read and dropped. */
function bareServer(answersFile: string): void {
  // Encoded once, as the service's cache keeps its answers.
  const texts = JSON.parse(readFileSync(answersFile, 'utf8')) as Record<string, string>;
  const answers = Object.fromEntries(Object.entries(texts).map(([key, text]) => [key, Buffer.from(text)]));
  const server = http.createServer((request, response) => {
    request.resume();
    request.on('end', () => {
      const body = answers[`${request.method} ${request.url}`];
      if (body === undefined) {
        response.writeHead(404).end();
        return;
      }
      response.writeHead(200, { 'content-type': 'application/json', 'content-length': body.length }).end(body);
    });
  });
  server.listen(0, '127.0.0.1', () => console.log(`port ${(server.address() as AddressInfo).port}`));
  process.once('SIGTERM', () => server.close(() => process.exit(0)));
}

interface Server {
  url: string;
  pid: number;
}

async function compareThroughput(scenarios: Scenario[], service: Server, bare: Server): Promise<void> {
  console.log(`\nThroughput: ${CONNECTIONS} keep-alive connections, ${DURATION_S} s each, 127.0.0.1`);
  console.log('(CPU ms/req is the server process\'s own CPU time per answered request; it depends less on other load on the machine.)');
  console.log(
    `${'request'.padEnd(32)} ${'nestbox req/s'.padStart(14)} ${'bare req/s'.padStart(11)} ${'ratio'.padStart(6)}   ${`aim >= ${AIMS.ratio}`.padEnd(11)} ${'nestbox CPU ms/req'.padStart(19)} ${'bare CPU ms/req'.padStart(16)}`,
  );
  const serviceUrl = service.url;
  for (const scenario of scenarios) {
    const probe = await fetch(serviceUrl + scenario.path, { method: scenario.method, headers: scenario.headers, body: scenario.body });
    await probe.arrayBuffer();
    if (probe.status !== 200) {
      console.log(`${scenario.name.padEnd(32)} missing: the service answers ${probe.status}`);
      continue;
    }
    // A short discarded run first, so that both are measured with their code compiled and warm.
    await load(service, scenario, WARMUP_S);
    const ours = await load(service, scenario);
    await load(bare, scenario, WARMUP_S);
    const theirs = await load(bare, scenario);
    const ratio = ours.rate / theirs.rate;
    const note = ours.failures > 0 ? `  (${ours.failures} non-2xx or errors)` : '';
    console.log(
      `${scenario.name.padEnd(32)} ${ours.rate.toFixed(0).padStart(14)} ${theirs.rate.toFixed(0).padStart(11)} ${ratio.toFixed(2).padStart(6)}   ${(ratio >= AIMS.ratio ? 'met' : 'missed').padEnd(11)} ${ours.cpuMs.toFixed(3).padStart(19)} ${theirs.cpuMs.toFixed(3).padStart(16)}${note}`,
    );
  }
}

async function load(server: Server, scenario: Scenario, duration = DURATION_S): Promise<{ rate: number; failures: number; cpuMs: number }> {
  const cpuBefore = cpuSecondsOf(server.pid);
  const result = await autocannon({
    url: server.url + scenario.path,
    method: scenario.method,
    headers: scenario.headers,
    body: scenario.body,
    connections: CONNECTIONS,
    duration,
  });
  const cpuMs = ((cpuSecondsOf(server.pid) - cpuBefore) * 1000) / Math.max(1, result.requests.total);
  return { rate: result.requests.total / result.duration, failures: result.non2xx + result.errors + result.timeouts, cpuMs };
}

/** Streams a 1 GiB multipart upload from a 1 MiB buffer while sampling the service's resident memory. */
async function measureUpload(serviceUrl: string, pid: number): Promise<void> {
  console.log(`Upload of ${UPLOAD_BYTES / 1024 ** 3} GiB to POST /tasks/create/file (aim: resident < ${AIMS.rssMB} MB)`);
  const before = memoryOf(pid);
  let peakRss = before.rss;
  const sampler = setInterval(() => (peakRss = Math.max(peakRss, memoryOf(pid).rss)), 20);
  const started = performance.now();
  try {
    const answer = await upload(serviceUrl);
    const seconds = (performance.now() - started) / 1000;
    const after = memoryOf(pid);
    peakRss = Math.max(peakRss, after.rss);
    console.log(`answer: ${answer.status} ${answer.body.trim().replace(/\s+/g, ' ')}`);
    console.log(`time: ${seconds.toFixed(1)} s (${(UPLOAD_BYTES / 1024 ** 2 / seconds).toFixed(0)} MiB/s)`);
    console.log(`VmRSS before: ${mb(before.rss)} MB, peak during upload: ${mb(peakRss)} MB (${peakRss < AIMS.rssMB * 1e6 ? 'met' : 'missed'}), growth ${mb(peakRss - before.rss)} MB`);
    console.log(`VmHWM (highest resident size since the service started): ${mb(after.hwm)} MB`);
  } catch (error) {
    console.log(`upload failed: ${(error as Error).message}; peak VmRSS seen: ${mb(peakRss)} MB`);
  } finally {
    clearInterval(sampler);
  }
}

function upload(serviceUrl: string): Promise<{ status: number; body: string }> {
  const prefix = multipartPrefix('big.bin');
  const suffix = multipartSuffix();
  const chunk = randomBytes(1024 ** 2);
  return new Promise((resolve, reject) => {
    const request = http.request(`${serviceUrl}/tasks/create/file`, {
      method: 'POST',
      agent: false,
      headers: {
        'content-type': `multipart/form-data; boundary=${BOUNDARY}`,
        'content-length': prefix.length + UPLOAD_BYTES + suffix.length,
      },
      timeout: UPLOAD_TIMEOUT_MS,
    });
    request.on('timeout', () => request.destroy(new Error(`no answer within ${UPLOAD_TIMEOUT_MS / 1000} s`)));
    request.on('error', reject);
    request.on('response', (response) => {
      let body = '';
      response.setEncoding('utf8').on('data', (text: string) => (body += text));
      response.on('end', () => resolve({ status: response.statusCode ?? 0, body }));
    });
    void (async () => {
      request.write(prefix);
      for (let sent = 0; sent < UPLOAD_BYTES; sent += chunk.length) {
        if (!request.write(chunk)) await once(request, 'drain');
        if (request.destroyed) return;
      }
      request.end(suffix);
    })().catch(reject);
  });
}

function multipartPrefix(filename: string): Buffer {
  return Buffer.from(
    `--${BOUNDARY}\r\nContent-Disposition: form-data; name="file"; filename="${filename}"\r\nContent-Type: application/octet-stream\r\n\r\n`,
  );
}

function multipartSuffix(): Buffer {
  return Buffer.from(`\r\n--${BOUNDARY}--\r\n`);
}

/** Resident memory now and at its highest, in bytes, from /proc/<pid>/status. */
function memoryOf(pid: number): { rss: number; hwm: number } {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const kb = (field: string) => Number(new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(status)?.[1] ?? NaN) * 1024;
  return { rss: kb('VmRSS'), hwm: kb('VmHWM') };
}

const mb = (bytes: number) => (bytes / 1e6).toFixed(0);

await main();
