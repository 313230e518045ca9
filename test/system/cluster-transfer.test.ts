import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readdirSync, readFileSync, readlinkSync, rmSync, writeFileSync } from 'node:fs';
import { connect, createServer, type Server, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { pino } from 'pino';
import { type AppContext, createContext } from '../../src/app.js';
import { TransferClient } from '../../src/cluster/transfer/client.js';
import { LENGTH_HEADER, NODE_HEADER, RESULTS_TYPE, resultsPath, samplePath, SHA256_HEADER } from '../../src/cluster/transfer/protocol.js';
import * as transfer from '../../src/cluster/transfer/worker-hooks.js';
import { validateConfig } from '../../src/config/load.js';
import { isNestboxError } from '../../src/errors.js';
import { processTask } from '../../src/pipeline/process-task.js';
import { prepareTaskFolder } from '../../src/scheduler/task-folder.js';
import { SESSION_COOKIE } from '../../src/api/sessions.js';
import { tarFolder } from '../../src/storage/tar-stream.js';
import { ethernetTcpPcap } from '../helpers/pcap-file.js';
import { startTestPostgres, type TestPostgres } from '../helpers/postgres.js';
import { submitSample } from '../helpers/sample-through-api.js';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { collect, handTar, sha256 } from '../helpers/tar-archive.js';

/**
 * Samples and results between a worker and the main node over real HTTP on loopback: a real nestbox API
 * server is the main node; the worker is a second nestbox context (its own home and storage, the same
 * database) using the transfer client and the worker hooks the scheduler and the pipeline call.
 */

const API_TOKEN = 'api-secret';
const NODE_TOKEN = 'node-secret';
const SAMPLE = Buffer.from('\x7fELF cluster transfer sample\n');

describe('cluster transfer between a worker and the main node', () => {
  let main: TestServer;
  let worker: AppContext;
  let workerHome: string;
  let postgres: TestPostgres;
  const warnings: string[] = [];

  before(async () => {
    // Roles main and worker need a database the nodes share: PostgreSQL.
    postgres = startTestPostgres();
    main = await startTestServer({ api: { token: API_TOKEN }, database: { connection: postgres.url }, cluster: { role: 'main', node_token: NODE_TOKEN } });
    workerHome = mkdtempSync(join(tmpdir(), 'nestbox-worker-'));
    const config = validateConfig({
      api: { token: API_TOKEN },
      paths: { storage: join(workerHome, 'storage'), tmppath: join(workerHome, 'tmp') },
      database: { connection: postgres.url },
      cluster: { role: 'worker', node_name: 'worker-a', main_url: main.url, node_token: NODE_TOKEN, transfer_attempts: 3, transfer_backoff_seconds: 0.05 },
      logging: { level: 'warn' },
    });
    const log = pino({ level: 'warn' }, { write: (line: string) => void warnings.push(line) });
    worker = await createContext({ config, home: workerHome, log });
  });

  after(async () => {
    await worker.close();
    await main.close();
    postgres.stop();
    rmSync(workerHome, { recursive: true, force: true });
  });

  /** A file task submitted to the main node and moved on to completed, as if a worker had run it. */
  async function completedTask(content: Buffer = SAMPLE): Promise<number> {
    const id = await submitSample(main, 'dropper.elf', content);
    assert.ok(await worker.stores.tasks.transition(id, ['pending'], 'running', { started_on: new Date().toISOString() }));
    assert.ok(await worker.stores.tasks.transition(id, ['running'], 'completed', { completed_on: new Date().toISOString() }));
    // The worker holds the task, as its claim would have recorded.
    await main.db.updateTable('tasks').set({ node: 'worker-a' }).where('id', '=', id).execute();
    return id;
  }

  /** The worker's task folder with raw results, as a run leaves it. */
  async function workerFolder(id: number, pcapBytes = 0, node: AppContext = worker): Promise<string> {
    const task = await transfer.beforeRun(node, (await node.stores.tasks.get(id))!);
    const paths = prepareTaskFolder(node.layout, task, await node.stores.samples.get(task.sample_id!));
    const segments = [{ src: '10.200.0.2', sport: 40000, dst: '192.0.2.7', dport: 80, payload: 'GET /stage2 HTTP/1.1\r\nHost: c2.example\r\n\r\n' }];
    const padding = Array.from({ length: Math.ceil(pcapBytes / 1400) }, (_, n) => ({ ...segments[0]!, payload: Buffer.alloc(1400, n % 256) }));
    writeFileSync(paths.pcap, ethernetTcpPcap([...segments, ...padding]));
    writeFileSync(join(paths.shots, '0001.jpg'), Buffer.from([0xff, 0xd8, 0xff, 0xe0, 1, 2, 3, 0xff, 0xd9]));
    writeFileSync(join(paths.files, 'dropped.txt'), 'dropped by the sample');
    return paths.dir;
  }

  const incoming = () => join(main.ctx.layout.root, '.incoming');
  const mainFolder = (id: number) => main.ctx.layout.analysis(id).dir;

  function putResults(id: number, body: Buffer, seal = { length: body.length, sha256: sha256(body) }, token = NODE_TOKEN) {
    return fetch(main.url + resultsPath(id), {
      method: 'PUT',
      headers: { authorization: `Bearer ${token}`, 'content-type': RESULTS_TYPE, [NODE_HEADER]: 'worker-a', [LENGTH_HEADER]: String(seal.length), [SHA256_HEADER]: seal.sha256 },
      body,
    });
  }

  /** The main node removes a failed upload's staging folder once it sees the connection end. */
  async function incomingEmptied(): Promise<void> {
    const deadline = Date.now() + 5000;
    while (existsSync(incoming()) && readdirSync(incoming()).length > 0) {
      assert.ok(Date.now() < deadline, `left in .incoming: ${readdirSync(incoming()).join(', ')}`);
      await sleep(50);
    }
  }

  it('fetches a task\'s sample into the worker\'s own storage, verified by its sha256', async () => {
    const id = await submitSample(main, 'dropper.elf', SAMPLE);
    const task = (await worker.stores.tasks.get(id))!;
    const local = await transfer.beforeRun(worker, task);
    assert.notEqual(local.target, task.target);
    assert.equal(basename(local.target), basename(task.target));
    assert.ok(local.target.startsWith(worker.layout.tmp));
    assert.deepEqual(readFileSync(local.target), SAMPLE);
    assert.deepEqual(readFileSync(worker.layout.binary(sha256(SAMPLE))), SAMPLE);
    const client = TransferClient.fromContext(worker);
    await assert.rejects(client.fetchSample(id, 'f'.repeat(64)), (error) => isNestboxError(error, 'conflict') && /sha256/.test(error.message));
    assert.ok(!existsSync(worker.layout.binary('f'.repeat(64))));
    assert.deepEqual(readdirSync(worker.layout.binaries), [sha256(SAMPLE)]);
  });

  it('answers 404 for the sample of a URL task, at once', async () => {
    const { body } = await main.json<{ task_id: number }>('/tasks/create/url', { method: 'POST', body: new URLSearchParams({ url: 'http://example.test/' }) });
    const before = warnings.length;
    const response = await fetch(main.url + samplePath(body.task_id), { headers: { authorization: `Bearer ${NODE_TOKEN}` } });
    assert.equal(response.status, 404);
    assert.match(((await response.json()) as { message: string }).message, /no sample file/);
    await assert.rejects(TransferClient.fromContext(worker).fetchSample(body.task_id, sha256('x')), (error) => isNestboxError(error, 'not_found'));
    assert.equal(warnings.length, before, 'a 404 is not retried');
  });

  it('lets only the node credential in: not the API token, not a web session', async () => {
    const id = await submitSample(main, 'dropper.elf', SAMPLE);
    const session = main.app.accessControl.sessions.create();
    const cases: Array<[string, Record<string, string>, number]> = [
      ['no credential', {}, 401],
      ['a Basic header', { authorization: `Basic ${Buffer.from(`x:${NODE_TOKEN}`).toString('base64')}` }, 401],
      ['a web session', { cookie: `${SESSION_COOKIE}=${session.id}` }, 401],
      ['a wrong token', { authorization: 'Bearer guess' }, 403],
      ['the API token', { authorization: `Bearer ${API_TOKEN}` }, 403],
    ];
    for (const [what, headers, status] of cases) {
      const response = await fetch(main.url + samplePath(id), { headers });
      assert.equal(response.status, status, what);
      assert.equal(typeof ((await response.json()) as { message: unknown }).message, 'string', what);
      const upload = await fetch(main.url + resultsPath(id), { method: 'PUT', headers: { ...headers, 'content-type': RESULTS_TYPE }, body: 'x' });
      assert.equal(upload.status, status, `upload with ${what}`);
    }
    const right = await fetch(main.url + samplePath(id), { headers: { authorization: `Bearer ${NODE_TOKEN}` } });
    assert.equal(right.status, 200);
    assert.equal(right.headers.get(SHA256_HEADER), sha256(SAMPLE));
    assert.deepEqual(Buffer.from(await right.arrayBuffer()), SAMPLE);
    const cuckooRoute = await fetch(`${main.url}/tasks/view/${id}`, { headers: { authorization: `Bearer ${NODE_TOKEN}` } });
    assert.equal(cuckooRoute.status, 401, 'the node credential opens only the cluster routes');
  });

  it('hands a processed task folder to the main node, which serves it with its usual endpoints', async () => {
    const id = await completedTask();
    const folder = await workerFolder(id);
    const pcapSent = readFileSync(join(folder, 'dump.pcap'));
    const shotSent = readFileSync(join(folder, 'shots', '0001.jpg'));
    await processTask(worker, id);
    assert.ok(!existsSync(folder), 'the worker keeps no copy once the main node has the results');
    assert.ok(!existsSync(join(worker.layout.tmp, 'cluster-samples', String(id))));
    assert.ok(existsSync(worker.layout.binary(sha256(SAMPLE))), 'the sample stays for later tasks');

    const { body: view } = await main.json<{ task: { status: string; errors: string[] } }>(`/tasks/view/${id}`);
    assert.equal(view.task.status, 'reported', view.task.errors.join('; '));
    const { status, body: report } = await main.json<any>(`/tasks/report/${id}`);
    assert.equal(status, 200);
    assert.equal(report.info.id, id);
    assert.equal(report.target.file.sha256, sha256(SAMPLE));
    const pcap = await main.fetch(`/pcap/get/${id}`);
    assert.equal(pcap.status, 200);
    assert.deepEqual(Buffer.from(await pcap.arrayBuffer()), pcapSent);
    const shot = await main.fetch(`/tasks/screenshots/${id}/0001`);
    assert.equal(shot.status, 200);
    assert.deepEqual(Buffer.from(await shot.arrayBuffer()), shotSent);
    const all = await main.fetch(`/tasks/report/${id}/all`);
    assert.equal(all.status, 200);
    assert.ok((await all.arrayBuffer()).byteLength > 0);
    assert.equal(readlinkSync(join(mainFolder(id), 'binary')), main.ctx.layout.binary(sha256(SAMPLE)), 'binary links to the main node\'s copy');
    assert.deepEqual(readFileSync(join(mainFolder(id), 'files', 'dropped.txt'), 'utf8'), 'dropped by the sample');
    assert.deepEqual(readdirSync(incoming()), []);
  });

  it('fails the task\'s reporting when the main node cannot be reached after every attempt', async () => {
    const id = await completedTask();
    const home = mkdtempSync(join(tmpdir(), 'nestbox-worker-'));
    const lines: string[] = [];
    const config = validateConfig({
      ...worker.config,
      paths: { storage: join(home, 'storage'), tmppath: join(home, 'tmp') },
      cluster: { ...worker.config.cluster, transfer_attempts: 2 },
    });
    const cut = await createContext({ config, home, log: pino({ level: 'warn' }, { write: (line: string) => void lines.push(line) }) });
    try {
      await workerFolder(id, 0, cut);
      const down = validateConfig({ ...config, cluster: { ...config.cluster, main_url: await closedPortUrl() } });
      await processTask({ ...cut, config: down }, id);
      const { body } = await main.json<{ task: { status: string; errors: string[] } }>(`/tasks/view/${id}`);
      assert.equal(body.task.status, 'failed_reporting');
      assert.match(body.task.errors.join('\n'), /Handing the results to the main node failed/);
      assert.equal(lines.filter((line) => line.includes('failed; retrying')).length, 1, 'two attempts, one retry');
      assert.ok(!existsSync(mainFolder(id)));
      assert.ok(existsSync(cut.layout.analysis(id).pcap), 'the worker keeps results it could not hand over');
    } finally {
      await cut.close();
      rmSync(home, { recursive: true, force: true });
    }
  });

  it('leaves no folder when an upload is cut off mid-stream, and the retry succeeds', async () => {
    const id = await completedTask(Buffer.from('\x7fELF another sample'));
    const folder = await workerFolder(id, 3_000_000);
    const archive = await collect(await tarFolder(folder, { compression: 'none', includeTopLevel: (name) => name !== 'binary' }));
    assert.ok(archive.length > 3_000_000);

    const cutAt = 1_000_000;
    const body = new ReadableStream<Uint8Array>({
      start(controller) {
        controller.enqueue(archive.subarray(0, cutAt));
      },
      pull(controller) {
        controller.error(new Error('connection lost'));
      },
    });
    const cut = await fetch(main.url + resultsPath(id), {
      method: 'PUT',
      headers: { authorization: `Bearer ${NODE_TOKEN}`, 'content-type': RESULTS_TYPE, [NODE_HEADER]: 'worker-a', [LENGTH_HEADER]: String(archive.length), [SHA256_HEADER]: sha256(archive) },
      body,
      duplex: 'half',
    } as RequestInit).then(
      (response) => response.status,
      (error: Error) => error,
    );
    assert.ok(cut instanceof Error || cut >= 400, `the cut upload answered ${String(cut)}`);
    await incomingEmptied();
    assert.ok(!existsSync(mainFolder(id)), 'no half-written task folder');

    // The worker's own client, through a link that breaks the first connection after cutAt bytes.
    const link = await breakingLink(new URL(main.url), cutAt);
    try {
      const client = new TransferClient({
        mainUrl: link.url,
        credential: NODE_TOKEN,
        nodeName: 'worker-a',
        layout: worker.layout,
        sampleLimit: 1024 * 1024,
        retry: { attempts: 3, backoffMs: 50, log: worker.log },
      });
      const before = warnings.length;
      const receipt = await client.uploadResults(id, folder);
      assert.equal(receipt.attempts, 2);
      assert.equal(link.connections(), 2);
      assert.match(warnings.slice(before).join('\n'), new RegExp(`Uploading the results of task ${id} failed; retrying`));
    } finally {
      await link.close();
    }
    assert.deepEqual(readFileSync(join(mainFolder(id), 'dump.pcap')), readFileSync(join(folder, 'dump.pcap')));
    assert.deepEqual(readdirSync(incoming()), []);
    assert.deepEqual(readdirSync(worker.layout.tmp).filter((name) => name.startsWith('results-')), [], 'the spooled archive is removed');
  });

  it('refuses archives that write outside the task folder, hold links, are altered or too large, and stale or other nodes\' tasks', async () => {
    const id = await completedTask();
    const escapes = [handTar([{ name: '../escape', content: 'x' }]), handTar([{ name: '/tmp/escape', content: 'x' }])];
    for (const archive of escapes) {
      const response = await putResults(id, archive);
      assert.equal(response.status, 400);
      assert.match(((await response.json()) as { message: string }).message, /outside|absolute/);
    }
    const linked = handTar([{ name: 'shots', type: '5' }, { name: 'shots/x', type: '2', linkName: '/etc' }, { name: 'shots/x/passwd', content: 'x' }]);
    const response = await putResults(id, linked);
    assert.equal(response.status, 400);
    assert.match(((await response.json()) as { message: string }).message, /symbolic link/);
    await incomingEmptied();
    assert.ok(!existsSync(mainFolder(id)));
    assert.ok(!existsSync(join(incoming(), '..', 'escape')) && !existsSync(join(main.ctx.layout.root, 'escape')));

    const whole = handTar([{ name: 'reports', type: '5' }, { name: 'reports/report.json', content: '{}' }]);
    const altered = await putResults(id, whole, { length: whole.length, sha256: sha256('other bytes') });
    assert.equal(altered.status, 400, 'bytes other than the ones sealed');
    assert.match(((await altered.json()) as { message: string }).message, /sha256/);
    await incomingEmptied();
    assert.ok(!existsSync(mainFolder(id)));

    const huge = await putResults(id, handTar([]), { length: 1e15, sha256: sha256('') });
    assert.equal(huge.status, 413);
    const unsealed = await putResults(id, handTar([]), { length: 0, sha256: 'nope' });
    assert.equal(unsealed.status, 400);
    await main.db.updateTable('tasks').set({ node: 'worker-b' }).where('id', '=', id).execute();
    const others = await putResults(id, handTar([{ name: 'reports', type: '5' }]));
    assert.equal(others.status, 409, 'results of a task another node holds');
    assert.match(((await others.json()) as { message: string }).message, /held by node worker-b/);
    const pending = await submitSample(main, 'pending.elf', SAMPLE);
    const stale = await putResults(pending, handTar([{ name: 'reports', type: '5' }]));
    assert.equal(stale.status, 409, 'results of a task not being processed are stale');
  });
});

describe('cluster routes without a node token of their own', () => {
  it('take the API token when cluster.node_token is empty, and are closed when no token is configured', async () => {
    const withApiToken = await startTestServer({ api: { token: API_TOKEN } });
    const open = await startTestServer();
    try {
      const id = await submitSample(withApiToken, 'dropper.elf', SAMPLE);
      const sample = await fetch(withApiToken.url + samplePath(id), { headers: { authorization: `Bearer ${API_TOKEN}` } });
      assert.equal(sample.status, 200);
      assert.deepEqual(Buffer.from(await sample.arrayBuffer()), SAMPLE);
      const openId = await submitSample(open, 'dropper.elf', SAMPLE);
      const closed = await fetch(open.url + samplePath(openId), { headers: { authorization: 'Bearer anything' } });
      assert.equal(closed.status, 403);
      assert.match(((await closed.json()) as { message: string }).message, /No node credential is configured/);
      assert.equal((await open.fetch(`/tasks/view/${openId}`)).status, 200, 'the Cuckoo routes stay open as configured');
    } finally {
      await withApiToken.close();
      await open.close();
    }
  });
});

/** The address of a loopback port nothing listens on any more. */
async function closedPortUrl(): Promise<string> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return `http://127.0.0.1:${port}`;
}

/** A loopback TCP link to `target` whose first connection breaks after `cutAfter` bytes from the client. */
async function breakingLink(target: URL, cutAfter: number): Promise<{ url: string; connections(): number; close(): Promise<void> }> {
  let connections = 0;
  const sockets = new Set<Socket>();
  const server: Server = createServer((client) => {
    const first = connections++ === 0;
    const upstream = connect(Number(target.port), target.hostname);
    for (const socket of [client, upstream]) sockets.add(socket).add(socket.once('close', () => sockets.delete(socket)));
    upstream.on('error', () => client.destroy());
    client.on('error', () => upstream.destroy());
    upstream.pipe(client);
    if (!first) {
      client.pipe(upstream);
      return;
    }
    let forwarded = 0;
    client.on('data', (chunk: Buffer) => {
      if (forwarded < cutAfter) upstream.write(chunk.subarray(0, cutAfter - forwarded));
      forwarded += chunk.length;
      if (forwarded >= cutAfter) {
        upstream.destroy();
        client.destroy();
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  return {
    url: `http://127.0.0.1:${port}`,
    connections: () => connections,
    // Kept-alive connections would hold close() until the main node's keep-alive timeout.
    close: () => new Promise<void>((resolve) => {
      server.close(() => resolve());
      for (const socket of sockets) socket.destroy();
    }),
  };
}
