import assert from 'node:assert/strict';
import { existsSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { EventReader } from '../helpers/event-stream.js';
import { reportOf, submitSample } from '../helpers/sample-through-api.js';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { taskRow } from '../helpers/tasks.js';

/**
 * Issue 12's behaviour section and live analysis, server side, over real HTTP with samples run on the
 * real Linux machine: the live stream of a task while it runs, then its calls paginated and filtered
 * from the calls index, and the index built again for a task that lost it.
 */

/** Runs for a few seconds: files written between short sleeps, each sleep a process of its own. */
const SLOW_SAMPLE = `#!/bin/sh
i=0
while [ $i -lt 25 ]; do
  echo "round $i" > /tmp/web-calls-$i.txt
  i=$((i + 1))
  sleep 0.2
done
`;

/** Thousands of calls at once (shell redirections open files without a process each): more than one batch. */
const BUSY_SAMPLE = `#!/bin/sh
i=0
while [ $i -lt 3000 ]; do
  : > /tmp/busy-$i
  i=$((i + 1))
done
`;

interface LiveEvent {
  event: string;
  data: any;
  /** When it arrived (ms since the epoch). */
  at: number;
}

/** Every event of a task's live stream until the server ends it, the events' text, and the stream's type. */
async function readLive(server: TestServer, taskId: number, timeoutMs = 240_000): Promise<{ events: LiveEvent[]; text: string; contentType: string | undefined }> {
  const reader = await EventReader.open(`${server.url}/ui/api/tasks/${taskId}/live`);
  assert.equal(reader.response.statusCode, 200);
  const events: LiveEvent[] = [];
  const deadline = Date.now() + timeoutMs;
  for (let next = await reader.next(timeoutMs); next; next = await reader.next(Math.max(1, deadline - Date.now()))) events.push({ ...next, at: Date.now() });
  const text = events.map((event) => `${event.event} ${JSON.stringify(event.data)}`).join('\n');
  return { events, text, contentType: reader.response.headers['content-type'] };
}

const ofKind = (events: LiveEvent[], kind: string) => events.filter((event) => event.event === kind);
const liveCalls = (events: LiveEvent[]) => ofKind(events, 'calls').flatMap((event) => event.data as any[]);

describe('web interface: behaviour calls and live analysis', { timeout: 900_000 }, () => {
  let server: TestServer;
  let slowTask: number;
  let slowReport: any;
  let slowLive: Awaited<ReturnType<typeof readLive>>;

  before(async () => {
    server = await startTestServer({ machines: [{ name: 'linux1', settings: { screenshots: false } }] }, { engine: true, pollMs: 200 });
    slowTask = await submitSample(server, 'web-calls.sh', SLOW_SAMPLE, { timeout: '60' });
    slowLive = await readLive(server, slowTask);
    slowReport = await reportOf(server, slowTask);
  });
  after(() => server?.close());

  const calls = (query: string, task = slowTask) => server.json(`/ui/api/tasks/${task}/calls${query}`);
  /** Every call that matches, read in pages of 1000 (the largest): checks each page's total on the way. */
  const allCalls = async (query = '') => {
    const listed: any[] = [];
    let total: number | undefined;
    do {
      const { status, body } = await calls(`?offset=${listed.length}&limit=1000${query}`);
      assert.equal(status, 200, JSON.stringify(body));
      assert.equal(body.total, total ?? body.total);
      total = body.total;
      listed.push(...body.calls);
      if (body.calls.length === 0) break;
    } while (listed.length < total!);
    assert.equal(listed.length, total);
    return listed;
  };

  it('streams a running task: its states, then processes and calls while it runs, then the end', () => {
    const { events, contentType } = slowLive;
    assert.equal(contentType, 'text/event-stream; charset=utf-8');
    const states = ofKind(events, 'state').map((event) => event.data.state);
    assert.ok(states.includes('running'), JSON.stringify(states));
    assert.equal(events.at(-1)?.event, 'end');
    assert.equal(events.at(-1)?.data.state, 'reported');
    // Calls arrive during the run, not only once it is over.
    const running = events.findIndex((event) => event.event === 'state' && event.data.state === 'running');
    const runOver = events.findIndex((event) => event.event === 'state' && event.data.state !== 'running' && event.data.state !== 'pending');
    const firstCalls = events.findIndex((event) => event.event === 'calls');
    assert.ok(running >= 0 && firstCalls > running && firstCalls < runOver, JSON.stringify(events.map((event) => event.event)));
    const written = liveCalls(events).filter((call) => call.api === 'openat' && /^\/tmp\/web-calls-\d+\.txt$/.test(String(call.arguments.path)));
    assert.equal(written.length, 25, JSON.stringify(written.map((call) => call.arguments.path)));
    for (const call of liveCalls(events)) assert.deepEqual(Object.keys(call).filter((key) => key !== 'repeated'), ['pid', 'tid', 'time', 'api', 'category', 'arguments', 'return', 'status']);
  });

  it("streams the sample's processes only, as the report lists them, and no host path", () => {
    const live = new Map<number, any>();
    for (const event of ofKind(slowLive.events, 'process')) live.set(event.data.pid, event.data);
    const reported = slowReport.behavior.processes as any[];
    assert.deepEqual([...live.keys()].sort(), reported.map((process) => process.pid).sort());
    for (const process of reported) {
      const row = live.get(process.pid);
      assert.deepEqual([row.ppid, row.name, row.command_line], [process.ppid, process.process_name, process.command_line]);
    }
    // The sample's first process has no parent: the one that started it is nestbox's.
    assert.equal(reported.filter((process) => process.ppid === 0).length, 1);
    assert.ok(reported.some((process) => process.process_name === 'sleep'));
    for (const hostPath of [server.home, server.ctx.config.paths.storage]) assert.ok(!slowLive.text.includes(hostPath), `the stream names ${hostPath}`);
  });

  it('batches a busy sample: at most 200 calls an event, the others counted, none lost', async () => {
    const busy = await submitSample(server, 'busy.sh', BUSY_SAMPLE, { timeout: '60' });
    const { events } = await readLive(server, busy);
    await reportOf(server, busy);
    const batches = ofKind(events, 'calls').map((event) => (event.data as any[]).length);
    assert.ok(batches.every((size) => size <= 200), JSON.stringify(batches));
    const skipped = ofKind(events, 'skipped').reduce((sum, event) => sum + event.data.calls, 0);
    assert.ok(skipped > 0, 'no call was skipped');
    const { body } = await calls('?limit=1', busy);
    assert.ok(body.total > 3000, JSON.stringify(body));
    assert.equal(liveCalls(events).length + skipped, body.total);
  });

  it('lists the processes with their calls counted, and pages through all the calls in log order', async () => {
    const { status, body } = await server.json(`/ui/api/tasks/${slowTask}/processes`);
    assert.equal(status, 200);
    const reported = slowReport.behavior.processes as any[];
    assert.deepEqual(
      body.processes.map((process: any) => [process.pid, process.ppid, process.name, process.command_line, process.first_seen]),
      [...reported].sort((a, b) => a.first_seen - b.first_seen || a.pid - b.pid).map((process) => [process.pid, process.ppid, process.process_name, process.command_line, process.first_seen]),
    );
    const all = await allCalls();
    const total = body.processes.reduce((sum: number, process: any) => sum + process.calls, 0);
    assert.equal(all.length, total);
    assert.ok(total > 1000, `only ${total} calls: one page would hold them all`);
    const times = all.map((call: any) => call.time);
    assert.deepEqual(times, [...times].sort((a, b) => a - b));
    const [first, second] = [await calls('?offset=0&limit=40'), await calls('?offset=40&limit=40')];
    assert.deepEqual([first.body.total, first.body.offset, first.body.limit], [total, 0, 40]);
    assert.deepEqual([...first.body.calls, ...second.body.calls], all.slice(0, 80));
    assert.deepEqual((await calls(`?offset=${total - 3}&limit=10`)).body.calls, all.slice(-3));
    assert.deepEqual((await calls(`?offset=${total + 5}`)).body, { calls: [], total, offset: total + 5, limit: 100 });
    // Each process's calls begin as report.json lists them.
    for (const process of reported) {
      const ofProcess = await allCalls(`&pid=${process.pid}`);
      assert.equal(ofProcess.length, body.processes.find((row: any) => row.pid === process.pid).calls);
      const asReported = ofProcess.slice(0, process.calls.length).map((call: any) => [call.api, call.category, call.arguments, call.return, call.status]);
      assert.deepEqual(asReported, process.calls.map((call: any) => [call.api, call.category, call.arguments, call.return_value, call.status]));
    }
  });

  it('filters the calls by process, name, category and argument text', async () => {
    const all = await allCalls();
    const sample = slowReport.behavior.processes.find((process: any) => process.ppid === 0);
    const expect = async (query: string, keep: (call: any) => boolean) => {
      const wanted = all.filter(keep);
      assert.ok(wanted.length > 0, `nothing to find with ${query}`);
      assert.deepEqual(await allCalls(query), wanted, query);
    };
    await expect(`&pid=${sample.pid}`, (call) => call.pid === sample.pid);
    await expect('&api=openat', (call) => call.api === 'openat');
    await expect('&api=openat,execve', (call) => call.api === 'openat' || call.api === 'execve');
    await expect('&category=process', (call) => call.category === 'process');
    await expect(`&pid=${sample.pid}&category=file&api=openat`, (call) => call.pid === sample.pid && call.api === 'openat');
    await expect('&q=web-calls-7.txt', (call) => JSON.stringify(call.arguments).includes('/tmp/web-calls-7.txt'));
    await expect('&q=WEB-CALLS-1', (call) => JSON.stringify(call.arguments).toLowerCase().includes('web-calls-1'));
    // Wildcards are text: no argument holds a percent sign.
    assert.equal((await calls('?q=%25')).body.total, 0);
    assert.equal((await calls('?q=web_calls')).body.total, 0);
    // Empty fields filter nothing.
    assert.equal((await calls('?pid=&api=&category=&q=')).body.total, all.length);
    assert.equal((await calls('?q=web-calls-99')).body.total, 0);
  });

  it('refuses malformed queries, unknown tasks and tasks not reported yet', async () => {
    for (const query of ['?limit=0', '?limit=1001', '?offset=-1', '?offset=x', '?pid=abc', '?category=bogus', `?q=${'x'.repeat(1001)}`]) {
      const { status, body } = await calls(query);
      assert.equal(status, 400, query);
      assert.match(body.message, /^Invalid query/);
    }
    for (const path of ['processes', 'calls', 'live']) {
      const { status, body } = await server.json(`/ui/api/tasks/999999/${path}`);
      assert.deepEqual([status, body], [404, { message: 'Task not found' }], path);
    }
    const failed = await server.ctx.stores.tasks.insert(taskRow({ status: 'failed_analysis' }));
    const { status, body } = await calls('', failed);
    assert.equal(status, 409);
    assert.match(body.message, /failed_analysis/);
    const { events } = await readLive(server, failed);
    assert.deepEqual(events.map((event) => [event.event, event.data]), [['state', { state: 'failed_analysis' }], ['end', { state: 'failed_analysis' }]]);
  });

  it('ends the live stream at once for a reported task', async () => {
    const { events } = await readLive(server, slowTask, 5000);
    assert.deepEqual(events.map((event) => event.event), ['state', 'end']);
  });

  it('builds the index again for a task that lost it, from its log or else from report.json', async () => {
    const paths = server.ctx.layout.analysis(slowTask);
    const before = [(await server.json(`/ui/api/tasks/${slowTask}/processes`)).body, (await calls('?limit=1000')).body];
    rmSync(paths.callsIndex);
    const [processes, page] = await Promise.all([server.json(`/ui/api/tasks/${slowTask}/processes`), calls('?limit=1000')]);
    assert.deepEqual([processes.body, page.body], before);
    assert.ok(existsSync(paths.callsIndex));
    // Without the log, the calls report.json kept.
    rmSync(paths.callsIndex);
    rmSync(join(paths.dir, 'logs', 'events.jsonl'));
    const fromReport = (await calls('?limit=1000')).body;
    const kept = slowReport.behavior.processes.reduce((sum: number, process: any) => sum + process.calls.length, 0);
    assert.equal(fromReport.total, kept);
  });
});

describe('web interface: the live stream and the server closing', () => {
  it('keeps streaming a running task until the server closes, which ends the stream', { timeout: 30_000 }, async () => {
    const server = await startTestServer({}, { engine: false });
    let closed: Promise<void> | undefined;
    try {
      const running = await server.ctx.stores.tasks.insert(taskRow({ status: 'running' }));
      const response = await server.fetch(`/ui/api/tasks/${running}/live`);
      const reader = (response.body as ReadableStream<Uint8Array>).getReader();
      const first = new TextDecoder().decode((await reader.read()).value);
      assert.match(first, /^event: state\ndata: \{"state":"running"\}\n\n/);
      closed = server.close();
      let rest = '';
      for (let chunk = await reader.read(); !chunk.done; chunk = await reader.read()) rest += new TextDecoder().decode(chunk.value);
      await closed;
      // No end: the task did not end, the server went away.
      assert.ok(!rest.includes('event: end'), rest);
    } finally {
      await (closed ?? server.close());
    }
  });
});
