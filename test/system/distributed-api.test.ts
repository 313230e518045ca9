import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import { after, before, describe, it } from 'node:test';
import { delegatePending } from '../../src/cluster/remote/delegate.js';
import { form, startTestServer, type TestServer } from '../helpers/server.js';

/**
 * Issue 13: Cuckoo 2.0.7's distributed API on a main node, driven with Cuckoo's request shapes, with a
 * second plain nestbox server (its own home, its own token, its own linux machine) added as a
 * REST-driven node. The main node runs an engine too, with one machine registered for a nestbox worker
 * node: tasks pinned to a node are left to that node by the main node's scheduler.
 */
const SAMPLE = '#!/bin/sh\necho "ran on the remote node" > /tmp/remote.txt\ncurl -s -m 3 http://dist-test.example/x || true\n';
const REMOTE_TOKEN = 'remote-node-secret-token';

interface Answer {
  status: number;
  body: any;
  text: string;
}

describe('Cuckoo distributed API with a remote nestbox node', { timeout: 600_000 }, () => {
  let main: TestServer;
  let remote: TestServer;

  before(async () => {
    main = await startTestServer(
      { api: { token: 'main-secret' }, cluster: { node_name: 'main', remote_poll_seconds: 0.3 }, machines: [{ name: 'mainbox', settings: { tracing: false, screenshots: false } }] },
      { engine: true, pollMs: 200 },
    );
    remote = await startTestServer(
      { api: { token: REMOTE_TOKEN }, machines: [{ name: 'remote1', tags: ['far'], settings: { tracing: false, screenshots: false } }] },
      { engine: true, pollMs: 200 },
    );
    // A nestbox worker node as the cluster's registration records it: its row, and its machine's node.
    await main.db.insertInto('nodes').values({ name: 'worker-b', role: 'worker', url: 'http://127.0.0.1:1/', enabled: 1 }).execute();
    await main.db.updateTable('machines').set({ node: 'worker-b' }).where('name', '=', 'mainbox').execute();
  });
  after(async () => {
    await main?.close();
    await remote?.close();
  });

  /** A request to the main node; the API's answers are JSON except `?mode=workers`. */
  async function call(method: string, path: string, body?: FormData | URLSearchParams): Promise<Answer> {
    const response = await main.fetch(path, { method, body });
    const text = await response.text();
    let parsed: unknown;
    try {
      parsed = JSON.parse(text);
    } catch {
      parsed = undefined;
    }
    return { status: response.status, body: parsed, text };
  }

  function assertError(answer: Answer, status: number, message: string | RegExp): void {
    assert.equal(answer.status, status, answer.text);
    assert.equal(answer.body.success, false, answer.text);
    if (typeof message === 'string') assert.equal(answer.body.message, message);
    else assert.match(answer.body.message, message);
  }

  async function distStatus(id: number): Promise<string> {
    const { body } = await call('GET', `/api/task/${id}`);
    return body.tasks[String(id)].status;
  }

  it('adds the remote node with its token, and refuses what Cuckoo refuses', async () => {
    assert.deepEqual((await call('GET', '/api/node')).body.nodes['remote'], undefined);
    assertError(await call('POST', '/api/node', new URLSearchParams({ url: remote.url })), 404, 'Missing node name');
    assertError(await call('POST', '/api/node', new URLSearchParams({ name: 'remote' })), 404, 'Missing IP address or direct URL');
    assertError(await call('POST', '/api/node', form({ name: 'remote', url: remote.url, token: 'wrong' })), 404, /^Error connecting to Cuckoo node: .*401/);
    assertError(await call('POST', '/api/node', form({ name: 'remote', url: remote.url })), 404, /^Error connecting to Cuckoo node: .*Authentication/);

    const added = await call('POST', '/api/node', form({ name: 'remote', url: remote.url, token: REMOTE_TOKEN }));
    assert.equal(added.status, 200, added.text);
    assert.equal(added.body.success, true);
    // The node's machine objects as it lists them, all fields.
    assert.deepEqual(added.body.machines.map((m: any) => [m.name, m.platform, m.tags, typeof m.resultserver_port]), [['remote1', 'linux', ['far'], 'number']]);
    assertError(await call('POST', '/api/node', form({ name: 'remote', url: remote.url, token: REMOTE_TOKEN })), 409, 'There is already a node with this name');
    assertError(await call('POST', '/api/node', form({ name: 'worker-b', ip: '127.0.0.1' })), 409, 'There is already a node with this name');
  });

  it('lists nodes under /api and /api/v1 without their tokens', async () => {
    for (const prefix of ['/api', '/api/v1']) {
      const listed = await call('GET', `${prefix}/node`);
      assert.equal(listed.status, 200);
      assert.doesNotMatch(listed.text, new RegExp(REMOTE_TOKEN));
      assert.deepEqual(listed.body, {
        success: true,
        nodes: {
          // The main node itself registered (role all); its machine went to worker-b.
          main: { enabled: true, machines: [], mode: 'normal', name: 'main', url: '' },
          remote: { enabled: true, machines: [{ name: 'remote1', platform: 'linux', tags: ['far'] }], mode: 'normal', name: 'remote', url: remote.url },
          'worker-b': { enabled: true, machines: [{ name: 'mainbox', platform: 'linux', tags: [] }], mode: 'normal', name: 'worker-b', url: 'http://127.0.0.1:1/' },
        },
      });
      const one = await call('GET', `${prefix}/node/remote`);
      assert.deepEqual(Object.keys(one.body.nodes), ['remote']);
      assert.doesNotMatch(one.text, new RegExp(REMOTE_TOKEN));
      assert.deepEqual(await call('GET', `${prefix}/node/nobody`).then((a) => [a.status, a.body]), [200, { success: true, nodes: {} }]);
    }
    const workers = await main.fetch('/api/node?mode=workers');
    assert.match(workers.headers.get('content-type') ?? '', /^text\/html/);
    assert.equal(await workers.text(), 'main remote worker-b');
  });

  it('updates, disables and refreshes nodes', async () => {
    assertError(await call('PUT', '/api/node/remote', new URLSearchParams({ enabled: 'yes' })), 400, /enabled must be an integer/);
    assertError(await call('PUT', '/api/node/nobody', new URLSearchParams({ enabled: '1' })), 404, 'No such node');
    assert.deepEqual((await call('PUT', '/api/node/remote', new URLSearchParams({ enabled: '0' }))).body, { success: true });
    assert.equal(await (await main.fetch('/api/node?mode=workers')).text(), 'main worker-b');
    assertError(await call('POST', '/api/task', form({ node: 'remote' }, [['file', 'a.sh', SAMPLE]])), 404, 'Node not found');
    assert.deepEqual((await call('PUT', '/api/v1/node/remote', new URLSearchParams({ enabled: '1' }))).body, { success: true });
    assert.deepEqual((await call('DELETE', '/api/node/worker-b')).body, { success: true });
    assert.equal((await call('GET', '/api/node/worker-b')).body.nodes['worker-b'].enabled, false);
    assert.deepEqual((await call('PUT', '/api/node/worker-b', new URLSearchParams({ enabled: '1' }))).body, { success: true });
    assertError(await call('DELETE', '/api/node/nobody'), 404, 'No such node');
    assert.deepEqual((await call('PUT', '/api/node/remote', new URLSearchParams({ token: 'stale' }))).body, { success: true });
    assertError(await call('POST', '/api/node/remote/refresh'), 404, /^Error connecting to Cuckoo node: .*401/);
    assert.deepEqual((await call('PUT', '/api/node/remote', new URLSearchParams({ token: REMOTE_TOKEN }))).body, { success: true });
    const refreshed = await call('POST', '/api/node/remote/refresh');
    assert.equal(refreshed.status, 200, refreshed.text);
    assert.deepEqual(refreshed.body.machines.map((m: any) => m.name), ['remote1']);
  });

  it('refuses task submissions as Cuckoo does', async () => {
    assertError(await call('POST', '/api/task', form({ node: 'remote' })), 404, 'No file has been provided');
    assertError(await call('POST', '/api/task', form({ node: 'remote' }, [['file', 'empty.sh', '']])), 404, 'Provided file is empty');
    assertError(await call('POST', '/api/task', form({ node: 'nobody' }, [['file', 'a.sh', SAMPLE]])), 404, 'Node not found');
    // worker-b's machine is linux and the cluster has no Windows machine: platform windows runs under Wine there.
    assertError(await call('POST', '/api/task', form({ node: 'worker-b', platform: 'windows' }, [['file', 'a.sh', SAMPLE]])), 400, /^a\.sh cannot run as platform "windows": no Windows machine is configured/);
    assertError(await call('GET', '/api/task?finished=1&status=finished'), 400, 'Do not combine finished and status. Finished has been deprecated.');
    assertError(await call('GET', '/api/task/999999'), 404, 'Task not found');
  });

  it('leaves tasks pinned to a nestbox worker node to it, and deletes several at once', async () => {
    const ids: number[] = [];
    for (const name of ['w1.sh', 'w2.sh']) {
      const created = await call('POST', '/api/task', form({ node: 'worker-b', timeout: '5' }, [['file', name, SAMPLE]]));
      assert.equal(created.status, 200, created.text);
      ids.push(created.body.task_id);
    }
    // Several looks of the main node's scheduler: the tasks are neither failed nor run by it.
    await sleep(1500);
    for (const id of ids) assert.equal(await distStatus(id), 'assigned');
    const rows = await main.db.selectFrom('tasks').select(['status', 'node']).where('id', 'in', ids).execute();
    assert.deepEqual(rows, [{ status: 'pending', node: 'worker-b' }, { status: 'pending', node: 'worker-b' }]);
    const listed = await call('GET', '/api/task?status=assigned');
    assert.deepEqual(Object.keys(listed.body.tasks), ids.map(String));

    assert.deepEqual((await call('DELETE', '/api/tasks', new URLSearchParams({ task_ids: ids.join(' ') }))).body, { success: true });
    for (const id of ids) assert.equal(await distStatus(id), 'deleted');
    assert.deepEqual((await call('DELETE', `/api/task/${ids[0]}`)).body, { message: 'Task already deleted', success: false });
  });

  it('runs a task pinned to the remote node there and serves its report and pcap', async () => {
    const created = await call('POST', '/api/task', form({ node: 'remote', timeout: '5', owner: 'alice', options: 'a=b' }, [['file', 'remote.sh', SAMPLE]]));
    assert.equal(created.status, 200, created.text);
    assert.equal(created.body.success, true);
    const id: number = created.body.task_id;
    assert.ok(['assigned', 'processing'].includes(await distStatus(id)));
    const early = await call('GET', `/api/report/${id}`);
    if (early.status !== 200) assertError(early, 420, 'Task not finished yet');

    const deadline = Date.now() + 300_000;
    while ((await distStatus(id)) !== 'finished') {
      assert.ok(Date.now() < deadline, `task ${id} is still ${await distStatus(id)}`);
      await sleep(500);
    }
    const { body: view } = await main.json(`/tasks/view/${id}`);
    assert.equal(view.task.status, 'reported', view.task.errors.join('; '));
    const row = await main.db.selectFrom('tasks').select(['node', 'node_task_id', 'delegated_on']).where('id', '=', id).executeTakeFirstOrThrow();
    assert.equal(row.node, 'remote');
    assert.ok(row.node_task_id !== null && row.delegated_on !== null);
    // Collected, then deleted on the node.
    assert.equal((await remote.fetch(`/tasks/view/${row.node_task_id}`)).status, 404);

    for (const path of [`/api/report/${id}`, `/api/v1/report/${id}/json`]) {
      const report = await call('GET', path);
      assert.equal(report.status, 200, report.text.slice(0, 200));
      assert.match(report.text, /ran on the remote node|remote\.sh/);
      assert.equal(report.body.target.file.name, 'remote.sh');
    }
    assertError(await call('GET', `/api/report/${id}/nosuchformat`), 404, 'Report format not found');
    const pcap = Buffer.from(await (await main.fetch(`/api/pcap/${id}`)).arrayBuffer());
    assert.ok(['d4c3b2a1', 'a1b2c3d4', '4d3cb2a1', '0a0d0d0a'].includes(pcap.subarray(0, 4).toString('hex')), 'a pcap file');
    assert.ok(pcap.includes(Buffer.from('dist-test')), 'the sample\'s DNS query is in the pcap');

    const listed = await call('GET', '/api/task?status=finished&owner=alice');
    const task = listed.body.tasks[String(id)];
    const nodes = await main.db.selectFrom('nodes').select(['id', 'name']).execute();
    assert.equal(task.node_id, nodes.find((node) => node.name === 'remote')!.id);
    assert.equal(task.task_id, row.node_task_id);
    assert.equal(task.options, 'a=b');
    assert.equal(task.filename, 'remote.sh');
    for (const key of ['submitted', 'delegated', 'started', 'completed']) assert.match(task[key], /^\w{3}, \d{2} \w{3} \d{4} \d{2}:\d{2}:\d{2} GMT$/);
    assert.equal(task.status, undefined);
    assert.deepEqual(Object.keys((await call('GET', '/api/v1/task?limit=1&offset=0')).body.tasks).length, 1);

    const status = await call('GET', '/api/status');
    assert.equal(status.body.success, true);
    assert.equal(typeof status.body.nodes.remote.timestamp, 'number');
    assert.equal(status.body.nodes.remote.machines.total, 1);
    assert.ok(status.body.tasks.all.finished >= 1);
    assert.ok(status.body.tasks.all.deleted >= 2);
    assert.ok(status.body.dist.diskspace.reports.total > 0 && status.body.dist.diskspace.samples.total > 0);
    assert.doesNotMatch(status.text, new RegExp(REMOTE_TOKEN));

    assert.deepEqual((await call('DELETE', `/api/task/${id}`)).body, { success: true });
    assertError(await call('GET', `/api/report/${id}`), 404, 'Task report has been deleted');
    assertError(await call('GET', `/api/pcap/${id}`), 404, 'Task files has been deleted');
  });

  it('sends a task only a remote node\'s machines fit there, and fails it with the node\'s reason', async () => {
    // No node named: no machine of the cluster has the tag "far", the remote node's machine has.
    const created = await call('POST', '/api/task', form({ tags: 'far', package: 'no-such-package', timeout: '5' }, [['file', 'bad.sh', SAMPLE]]));
    assert.equal(created.status, 200, created.text);
    const id: number = created.body.task_id;
    assert.equal((await main.db.selectFrom('tasks').select('node').where('id', '=', id).executeTakeFirstOrThrow()).node, 'remote');
    const deadline = Date.now() + 120_000;
    while ((await distStatus(id)) !== 'finished') {
      assert.ok(Date.now() < deadline, `task ${id} is still ${await distStatus(id)}`);
      await sleep(300);
    }
    const { body: view } = await main.json(`/tasks/view/${id}`);
    assert.equal(view.task.status, 'failed_analysis');
    assert.match(view.task.errors.join('\n'), /node remote.*no-such-package/is);
    assertError(await call('GET', `/api/report/${id}`), 404, 'Report format not found');
  });

  it('keeps a task for a node that does not answer, and hands it over once the node is back', async () => {
    assert.deepEqual((await call('PUT', '/api/node/remote', new URLSearchParams({ url: 'http://127.0.0.1:1/' }))).body, { success: true });
    const created = await call('POST', '/api/task', form({ node: 'remote', timeout: '5' }, [['file', 'later.sh', SAMPLE]]));
    assert.equal(created.status, 200, created.text);
    const id: number = created.body.task_id;
    await sleep(1200);
    assert.equal(await distStatus(id), 'assigned');
    assert.deepEqual((await main.json(`/tasks/view/${id}`)).body.task.errors, []);
    assert.deepEqual((await call('PUT', '/api/node/remote', form({ url: remote.url }))).body, { success: true });
    const deadline = Date.now() + 120_000;
    while ((await distStatus(id)) !== 'finished') {
      assert.ok(Date.now() < deadline, `task ${id} is still ${await distStatus(id)}`);
      await sleep(300);
    }
    assert.equal((await main.json(`/tasks/view/${id}`)).body.task.status, 'reported');
  });

  it('hands a task to its node as the node is then, not as a look begun before a change saw it', async () => {
    // A look at the nodes read this row, then the node was moved to an address that does not answer, then the task came.
    const seenBefore = (await main.ctx.stores.distributedNodes.get('remote'))!;
    assert.deepEqual((await call('PUT', '/api/node/remote', new URLSearchParams({ url: 'http://127.0.0.1:1/' }))).body, { success: true });
    const created = await call('POST', '/api/task', form({ node: 'remote', timeout: '5' }, [['file', 'moved.sh', SAMPLE]]));
    const id: number = created.body.task_id;
    await assert.rejects(delegatePending(main.ctx, seenBefore), 'the node at its new address does not answer');
    assert.equal(await distStatus(id), 'assigned');
    assert.equal((await main.json(`/tasks/view/${id}`)).body.task.node_task_id ?? null, null);
    assert.deepEqual((await call('DELETE', `/api/task/${id}`)).body, { success: true });
    assert.deepEqual((await call('PUT', '/api/node/remote', form({ url: remote.url }))).body, { success: true });
  });

  it('asks for the main node\'s token like every other route', async () => {
    const response = await fetch(`${main.url}/api/node`);
    assert.equal(response.status, 401);
  });
});
