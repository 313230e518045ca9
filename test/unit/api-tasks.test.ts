import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { sql } from 'kysely';
import type { NewTask, TaskRow } from '../../src/db/schema.js';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { taskRow as completeTaskRow } from '../helpers/tasks.js';

/** Tasks, samples, guests and errors are written straight into the real database, as the engine would. */
function taskFields(server: TestServer, overrides: Partial<NewTask> = {}): NewTask {
  return completeTaskRow({ target: join(server.home, 'tmp', 'missing-sample.bin'), ...overrides });
}

function addTask(server: TestServer, overrides: Partial<NewTask> = {}): Promise<number> {
  return server.ctx.stores.tasks.insert(taskFields(server, overrides));
}

/** A sample whose file exists in tmp/ (as a submission leaves it) and in storage/binaries/. */
async function addSample(server: TestServer, content: string) {
  const hash = (algorithm: string) => createHash(algorithm).update(content).digest('hex');
  const sha256 = hash('sha256');
  const id = await server.ctx.stores.samples.upsert({
    file_size: content.length,
    file_type: 'ASCII text, with no line terminators',
    md5: hash('md5'),
    crc32: 'ABCDEF01',
    sha1: hash('sha1'),
    sha256,
    sha512: hash('sha512'),
    ssdeep: '3:abc:def',
  });
  const dir = join(server.home, 'tmp', `upload-${sha256.slice(0, 8)}`);
  mkdirSync(dir, { recursive: true });
  const target = join(dir, 'sample.sh');
  writeFileSync(target, content);
  writeFileSync(server.ctx.layout.binary(sha256), content);
  return { id, sha256, target };
}

async function taskRow(server: TestServer, id: number): Promise<TaskRow | undefined> {
  return server.ctx.stores.tasks.get(id);
}

/** The JSON answer to a GET of `path` must be exactly this status and body. */
async function assertAnswer(server: TestServer, path: string, status: number, body: unknown): Promise<void> {
  const answer = await server.json(path);
  assert.equal(answer.status, status, path);
  assert.deepEqual(answer.body, body, path);
}

type StoredSample = Awaited<ReturnType<typeof addSample>>;

/** A fresh server whose database and storage hold one sample. */
async function startServerWithSample(content: string): Promise<{ server: TestServer; sample: StoredSample }> {
  const server = await startTestServer();
  return { server, sample: await addSample(server, content) };
}

describe('task listing and viewing', () => {
  let server: TestServer;
  let sample: StoredSample;
  let reported: number;
  let pending: number;
  let completed: number;

  before(async () => {
    server = await startTestServer();
    sample = await addSample(server, 'echo hello');
    // Inserted so that id order differs from Cuckoo's order (completed_on, pending first).
    reported = await addTask(server, {
      target: sample.target,
      sample_id: sample.id,
      status: 'reported',
      owner: 'alice',
      custom: 'cust',
      machine: 'linux1',
      package: 'generic',
      platform: 'linux',
      tags: '["t1","t2"]',
      options: 'a=1,b,c=2=3,route=none',
      memory: 1,
      enforce_timeout: 1,
      priority: 2,
      timeout: 60,
      clock: '2019-01-02T10:11:12.000Z',
      added_on: '2026-01-01T10:00:00.000Z',
      started_on: '2026-01-01T10:00:05.000Z',
      completed_on: '2026-01-03T10:00:00.000Z',
      route: 'none',
      processing: 'node1:1',
    });
    pending = await addTask(server, { category: 'url', target: 'http://example.test/', owner: 'bob' });
    completed = await addTask(server, { status: 'completed', completed_on: '2026-01-01T12:00:00.000Z', started_on: '2026-01-01T11:59:00.000Z' });
    const guestId = await server.ctx.stores.guests.create(reported, { name: 'linux1', label: 'linux1-label' }, 'LinuxNamespaces');
    await server.ctx.stores.guests.setStatus(guestId, 'stopped');
    await server.ctx.stores.tasks.addError(reported, 'Some error happened');
    await server.ctx.stores.tasks.addError(reported, '', 'vmrouting');
  });
  after(() => server.close());

  it('lists every task in Cuckoo order: unfinished first, then oldest completed', async () => {
    const { status, body, response } = await server.json('/tasks/list');
    assert.equal(status, 200);
    assert.equal(response.headers.get('content-type'), 'application/json');
    assert.deepEqual(body.tasks.map((task: { id: number }) => task.id), [pending, completed, reported]);
  });

  it('shows a task with its sample, guest and errors in Cuckoo field names and types', async () => {
    const { body } = await server.json('/tasks/list');
    const task = body.tasks.find((t: { id: number }) => t.id === reported);
    const guest = task.guest;
    assert.match(guest.started_on, /^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d$/);
    assert.match(guest.shutdown_on, /^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d$/);
    assert.deepEqual(task, {
      added_on: '2026-01-01 10:00:00',
      category: 'file',
      clock: '2019-01-02 10:11:12',
      completed_on: '2026-01-03 10:00:00',
      custom: 'cust',
      duration: 172795,
      enforce_timeout: true,
      errors: ['Some error happened', ''],
      guest: {
        id: guest.id,
        label: 'linux1-label',
        manager: 'LinuxNamespaces',
        name: 'linux1',
        shutdown_on: guest.shutdown_on,
        started_on: guest.started_on,
        status: 'stopped',
        task_id: reported,
      },
      id: reported,
      machine: 'linux1',
      memory: true,
      options: { a: '1', c: '2=3', route: 'none' },
      owner: 'alice',
      package: 'generic',
      platform: 'linux',
      priority: 2,
      processing: 'node1:1',
      route: 'none',
      sample: {
        crc32: 'ABCDEF01',
        file_size: 10,
        file_type: 'ASCII text, with no line terminators',
        id: sample.id,
        md5: createHash('md5').update('echo hello').digest('hex'),
        sha1: createHash('sha1').update('echo hello').digest('hex'),
        sha256: sample.sha256,
        sha512: createHash('sha512').update('echo hello').digest('hex'),
        ssdeep: '3:abc:def',
      },
      sample_id: sample.id,
      started_on: '2026-01-01 10:00:05',
      status: 'reported',
      submit_id: null,
      tags: ['t1', 't2'],
      target: sample.target,
      timeout: 60,
    });
    const url = body.tasks.find((t: { id: number }) => t.id === pending);
    assert.deepEqual([url.sample, url.guest, url.errors, url.sample_id, url.duration, url.completed_on], [{}, {}, [], null, -1, null]);
  });

  it('pages with /<limit> and /<limit>/<offset>, digits only, leading zeros allowed', async () => {
    const ids = async (path: string) => (await server.json(path)).body.tasks.map((t: { id: number }) => t.id);
    assert.deepEqual(await ids('/tasks/list/1'), [pending]);
    assert.deepEqual(await ids('/tasks/list/2/1'), [completed, reported]);
    assert.deepEqual(await ids('/tasks/list/002/02'), [reported]);
    assert.deepEqual(await ids('/tasks/list/0'), []);
    assert.deepEqual(await ids('/tasks/list/99999999999999999999999'), [pending, completed, reported]);
    assert.deepEqual(await ids('/tasks/list/5/99999999999999999999999'), []);
    assert.deepEqual(await ids('/v1/tasks/list/1/1'), [completed]);
    for (const path of ['/tasks/list/-1', '/tasks/list/1x', '/tasks/list/', '/tasks/list/1/2/3']) {
      assert.equal((await server.fetch(path)).status, 404, path);
    }
  });

  it('filters by status, owner and completed_after; empty values do not filter', async () => {
    const ids = async (query: string) => (await server.json(`/tasks/list?${query}`)).body.tasks.map((t: { id: number }) => t.id);
    assert.deepEqual(await ids('status=reported'), [reported]);
    assert.deepEqual(await ids('status=nonsense'), []);
    assert.deepEqual(await ids('owner=bob'), [pending]);
    assert.deepEqual(await ids('owner=alice&status=pending'), []);
    assert.deepEqual(await ids('status=&owner='), [pending, completed, reported]);
    const jan2 = Date.parse('2026-01-02T00:00:00Z') / 1000;
    assert.deepEqual(await ids(`completed_after=${jan2}`), [reported]);
    assert.deepEqual(await ids(`completed_after=${jan2 - 86400}`), [completed, reported]);
    assert.deepEqual(await ids('status=completed&owner=&unknown=1'), [completed]);
  });

  it('refuses a completed_after that is not a whole UNIX timestamp with a 400', async () => {
    for (const value of ['abc', '1.5', '1e3', '99999999999999999999']) {
      const { status, body } = await server.json(`/tasks/list?completed_after=${value}`);
      assert.equal(status, 400, value);
      assert.equal(body.message, 'completed_after must be a UNIX timestamp in whole seconds');
    }
  });

  it('lists the tasks of one sample, with the same filters', async () => {
    assert.deepEqual((await server.json(`/tasks/sample/${sample.id}`)).body, (await server.json(`/tasks/list?owner=alice`)).body);
    assert.deepEqual((await server.json(`/v1/tasks/sample/${sample.id}?status=pending`)).body, { tasks: [] });
    assert.deepEqual((await server.json('/tasks/sample/9999')).body, { tasks: [] });
  });

  it('views one task with list-format dates, under /v1 too', async () => {
    const listed = (await server.json('/tasks/list')).body.tasks.find((t: { id: number }) => t.id === reported);
    for (const path of [`/tasks/view/${reported}`, `/v1/tasks/view/${reported}`, `/tasks/view/000${reported}`]) {
      await assertAnswer(server, path, 200, { task: listed });
    }
  });

  it('answers 404 "Task not found" for an unknown task', async () => {
    for (const path of ['/tasks/view/9999', '/tasks/view/0', '/tasks/view/123456789012345678901234']) {
      await assertAnswer(server, path, 404, { message: 'Task not found' });
    }
  });

  it('answers HEAD on the GET routes with the GET status and headers but no body', async () => {
    const response = await server.fetch(`/tasks/view/${reported}`, { method: 'HEAD' });
    assert.equal(response.status, 200);
    assert.equal(response.headers.get('content-type'), 'application/json');
    assert.equal(await response.text(), '');
    assert.equal((await server.fetch('/tasks/view/9999', { method: 'HEAD' })).status, 404);
    assert.equal((await server.fetch('/tasks/list', { method: 'HEAD' })).status, 200);
  });
});

describe('task listing at scale', () => {
  let server: TestServer;
  before(async () => {
    server = await startTestServer();
  });
  after(() => server.close());

  it('loads samples, guests and errors of more tasks than one query batch holds', async () => {
    const sample = await addSample(server, 'many');
    await server.db.transaction().execute(async (trx) => {
      for (let i = 0; i < 1203; i++) {
        const id = await server.ctx.stores.tasks.insert(taskFields(server, { sample_id: i % 2 ? sample.id : null, owner: `o${i}` }), trx);
        await server.ctx.stores.tasks.addError(id, `error of ${id}`, '', trx);
      }
    });
    const { body } = await server.json('/tasks/list');
    assert.equal(body.tasks.length, 1203);
    for (const task of body.tasks) {
      assert.deepEqual(task.errors, [`error of ${task.id}`]);
      assert.equal(task.sample.id, task.sample_id === null ? undefined : sample.id);
    }
  });
});

describe('GET /tasks/reschedule', () => {
  let server: TestServer;
  let sample: StoredSample;
  before(async () => ({ server, sample } = await startServerWithSample('reschedule me')));
  after(() => server.close());

  const finishedFileTask = (overrides: Partial<NewTask> = {}) =>
    addTask(server, {
      target: sample.target,
      sample_id: sample.id,
      status: 'reported',
      submit_id: null,
      options: 'z=1, a = 2 ,junk',
      tags: '["x"]',
      custom: 'c',
      owner: 'o',
      machine: 'linux1',
      package: 'generic',
      platform: 'linux',
      memory: 1,
      enforce_timeout: 1,
      timeout: 42,
      priority: 3,
      clock: '2019-01-02T10:11:12.000Z',
      completed_on: '2026-01-01T10:00:00.000Z',
      ...overrides,
    });

  it('queues a copy with priority 1 by default and marks the original recovered', async () => {
    const old = await finishedFileTask();
    const { status, body } = await server.json(`/tasks/reschedule/${old}`);
    assert.equal(status, 200);
    assert.deepEqual(Object.keys(body), ['status', 'task_id']);
    assert.equal(body.status, 'OK');
    assert.equal((await taskRow(server, old))?.status, 'recovered');
    const copy = await taskRow(server, body.task_id);
    assert.ok(copy && body.task_id > old);
    assert.deepEqual(
      { ...copy, id: 0, added_on: '' },
      {
        id: 0,
        target: sample.target,
        category: 'file',
        timeout: 42,
        priority: 1,
        custom: 'c',
        owner: 'o',
        machine: 'linux1',
        package: 'generic',
        platform: 'linux',
        tags: '["x"]',
        options: 'a=2,z=1',
        memory: 1,
        enforce_timeout: 1,
        clock: '2019-01-02T10:11:12.000Z',
        added_on: '',
        started_on: null,
        completed_on: null,
        status: 'pending',
        sample_id: sample.id,
        submit_id: null,
        processing: null,
        route: null,
        reboot_of: null,
        archive_id: null,
        archive_name: null,
        archive_member: null,
        score: null,
        node: null,
        node_task_id: null,
        delegated_on: null,
      },
    );
  });

  it('reschedules a file unpacked from an archive with its provenance (Cuckoo refuses archive tasks)', async () => {
    const provenance = { archive_id: sample.id, archive_name: 'bundle.zip', archive_member: 'dir/sample.sh' };
    const old = await finishedFileTask({ category: 'archive', ...provenance });
    const { status, body } = await server.json(`/tasks/reschedule/${old}`);
    assert.equal(status, 200);
    const copy = (await taskRow(server, body.task_id))!;
    assert.deepEqual([copy.category, copy.target, copy.sample_id, copy.archive_id, copy.archive_name, copy.archive_member],
      ['archive', sample.target, sample.id, ...Object.values(provenance)]);
  });

  it('takes the priority from the path, within 1..tasks.max_priority, under /v1 too', async () => {
    const old = await finishedFileTask({ status: 'failed_analysis' });
    const { body } = await server.json(`/v1/tasks/reschedule/${old}/3`);
    assert.equal((await taskRow(server, body.task_id))?.priority, 3);
    for (const priority of ['0', '4', '99999999999999999999']) {
      const other = await finishedFileTask();
      await assertAnswer(server, `/tasks/reschedule/${other}/${priority}`, 400, { message: 'Priority must be between 1 and 3' });
      assert.equal((await taskRow(server, other))?.status, 'reported');
    }
    assert.equal((await server.fetch(`/tasks/reschedule/${old}/-1`)).status, 404);
  });

  it('reschedules a URL task', async () => {
    const old = await addTask(server, { category: 'url', target: 'http://example.test/x', status: 'reported' });
    const { body } = await server.json(`/tasks/reschedule/${old}`);
    const copy = await taskRow(server, body.task_id);
    assert.deepEqual([copy?.category, copy?.target, copy?.status], ['url', 'http://example.test/x', 'pending']);
  });

  it('refuses a task that is still pending or running with a 409, changing nothing', async () => {
    for (const status of ['pending', 'running'] as const) {
      const id = await finishedFileTask({ status, completed_on: null });
      await assertAnswer(server, `/tasks/reschedule/${id}`, 409, { message: `Task ${id} is still ${status}; only a task whose analysis has ended can be rescheduled` });
      assert.equal((await taskRow(server, id))?.status, status);
    }
  });

  it('answers 404 with Cuckoo\'s message for an unknown task', async () => {
    await assertAnswer(server, '/tasks/reschedule/9999', 404, { message: 'There is no analysis with the specified ID' });
  });

  it('answers 500 when the sample file is gone, and leaves the original as it was (Cuckoo marks it recovered anyway)', async () => {
    const before = (await server.ctx.stores.tasks.list()).length;
    const id = await finishedFileTask({ target: join(server.home, 'tmp', 'vanished.bin') });
    await assertAnswer(server, `/tasks/reschedule/${id}`, 500, { message: 'An error occurred while trying to reschedule the task' });
    assert.equal((await taskRow(server, id))?.status, 'reported');
    assert.equal((await server.ctx.stores.tasks.list()).length, before + 1);
  });
});

describe('GET /tasks/delete', () => {
  let server: TestServer;
  let sample: StoredSample;
  before(async () => ({ server, sample } = await startServerWithSample('delete me')));
  after(() => server.close());

  /** A finished task with its analysis folder laid out as the engine writes it. */
  async function analysedTask(status: TaskRow['status'] = 'reported') {
    const id = await addTask(server, { target: sample.target, sample_id: sample.id, status });
    const paths = server.ctx.layout.analysis(id);
    paths.create();
    writeFileSync(paths.reportJson, '{}');
    writeFileSync(join(paths.files, 'dropped.bin'), 'x');
    symlinkSync(server.ctx.layout.binary(sample.sha256), paths.binary);
    await server.ctx.stores.guests.create(id, { name: 'linux1', label: 'linux1' }, 'LinuxNamespaces');
    await server.ctx.stores.tasks.addError(id, 'oops');
    return { id, dir: paths.dir };
  }

  async function rowsOf(table: 'guests' | 'errors', taskId: number) {
    return server.db.selectFrom(table).select('id').where('task_id', '=', taskId).execute();
  }

  it('removes the row, its guests and errors, and the analysis folder; keeps sample and binary', async () => {
    for (const prefix of ['', '/v1']) {
      const { id, dir } = await analysedTask();
      await assertAnswer(server, `${prefix}/tasks/delete/${id}`, 200, { status: 'OK' });
      assert.equal(await taskRow(server, id), undefined);
      assert.deepEqual([await rowsOf('guests', id), await rowsOf('errors', id)], [[], []]);
      assert.equal(existsSync(dir), false);
      assert.ok(await server.ctx.stores.samples.get(sample.id));
      assert.ok(existsSync(server.ctx.layout.binary(sample.sha256)));
      assert.ok(existsSync(sample.target));
    }
    assert.deepEqual(readdirSync(server.ctx.layout.analyses).filter((name) => name.startsWith('.')), []);
  });

  it('deletes a task that never got a folder', async () => {
    const id = await addTask(server);
    assert.deepEqual((await server.json(`/tasks/delete/${id}`)).body, { status: 'OK' });
    assert.equal(await taskRow(server, id), undefined);
  });

  it('refuses a running task with Cuckoo\'s 500, keeping row and folder', async () => {
    const { id, dir } = await analysedTask('running');
    await assertAnswer(server, `/tasks/delete/${id}`, 500, { message: 'The task is currently being processed, cannot delete' });
    assert.equal((await taskRow(server, id))?.status, 'running');
    assert.ok(existsSync(join(dir, 'reports', 'report.json')));
  });

  it('answers 404 "Task not found" for an unknown task', async () => {
    await assertAnswer(server, '/tasks/delete/9999', 404, { message: 'Task not found' });
  });

  it('changes nothing when HEAD is used', async () => {
    const { id, dir } = await analysedTask();
    const response = await server.fetch(`/tasks/delete/${id}`, { method: 'HEAD' });
    assert.equal(response.status, 200);
    assert.ok(await taskRow(server, id));
    assert.ok(existsSync(dir));
  });

  it('puts the folder back and answers 500 when the database refuses the delete', async () => {
    const { id, dir } = await analysedTask();
    // A real failure of the real database: a trigger that aborts deleting this one row.
    await sql`create trigger refuse_delete before delete on tasks when old.id = ${sql.lit(id)} begin select raise(abort, 'refused'); end`.execute(server.db);
    try {
      await assertAnswer(server, `/tasks/delete/${id}`, 500, { message: 'An error occurred while trying to delete the task' });
      assert.ok(await taskRow(server, id));
      assert.ok(existsSync(join(dir, 'reports', 'report.json')));
      assert.deepEqual(readdirSync(server.ctx.layout.analyses).filter((name) => name.startsWith('.')), []);
    } finally {
      await sql`drop trigger refuse_delete`.execute(server.db);
    }
  });

  // chattr needs a file system with inode flags (ext4, xfs, btrfs, tmpfs on Linux >= 6.0).
  const immutable = (path: string, on: boolean) => execFileSync('chattr', [on ? '+i' : '-i', path], { stdio: 'pipe' });
  /** False where the file system has no inode flags: the test then skips. */
  const madeImmutable = (path: string) => {
    try {
      immutable(path, true);
      return true;
    } catch {
      return false;
    }
  };

  it('answers 500 and keeps row and folder intact when the folder cannot be moved', async (t) => {
    const { id, dir } = await analysedTask();
    if (!madeImmutable(dir)) return t.skip('chattr is not supported here');
    try {
      await assertAnswer(server, `/tasks/delete/${id}`, 500, { message: 'An error occurred while trying to delete the task' });
      assert.ok(await taskRow(server, id));
      assert.ok(existsSync(join(dir, 'reports', 'report.json')));
    } finally {
      immutable(dir, false);
    }
  });

  it('answers 500 when the folder cannot be removed, leaving neither row nor analyses/<id> behind', async (t) => {
    const { id, dir } = await analysedTask();
    const stuck = join(dir, 'files', 'dropped.bin');
    if (!madeImmutable(stuck)) return t.skip('chattr is not supported here');
    let leftover: string | undefined;
    try {
      await assertAnswer(server, `/tasks/delete/${id}`, 500, { message: 'The task was deleted but its analysis folder could not be removed completely' });
      assert.equal(await taskRow(server, id), undefined);
      assert.equal(existsSync(dir), false);
      leftover = readdirSync(server.ctx.layout.analyses).find((name) => name.startsWith(`.deleted-${id}-`));
      assert.ok(leftover, 'the remains are set aside under a hidden name');
    } finally {
      if (leftover) {
        const aside = join(server.ctx.layout.analyses, leftover);
        immutable(join(aside, 'files', 'dropped.bin'), false);
        rmSync(aside, { recursive: true });
      } else {
        immutable(stuck, false);
      }
    }
  });
});

describe('GET /tasks/rereport and /tasks/reboot', () => {
  let server: TestServer;
  let sample: StoredSample;
  before(async () => ({ server, sample } = await startServerWithSample('reboot me')));
  after(() => server.close());

  it('moves a reported task back to completed for processing, clearing its worker', async () => {
    const id = await addTask(server, { status: 'reported', completed_on: '2020-01-01T00:00:00.000Z', processing: 'old-worker' });
    await assertAnswer(server, `/tasks/rereport/${id}`, 200, { success: true });
    const row = await taskRow(server, id);
    assert.equal(row?.status, 'completed');
    assert.equal(row?.processing, null);
    assert.ok(Date.parse(row!.completed_on!) > Date.parse('2025-01-01'));
  });

  it('answers success false, changing nothing, for any other status', async () => {
    for (const status of ['pending', 'running', 'completed', 'failed_processing'] as const) {
      const id = await addTask(server, { status });
      assert.deepEqual((await server.json(`/tasks/rereport/${id}`)).body, { success: false });
      assert.equal((await taskRow(server, id))?.status, status);
    }
  });

  it('answers 404 for an unknown task and has no /v1 alias', async () => {
    await assertAnswer(server, '/tasks/rereport/9999', 404, { message: 'Task not found' });
    const id = await addTask(server, { status: 'reported' });
    assert.equal((await server.fetch(`/v1/tasks/rereport/${id}`)).status, 404);
    assert.equal((await taskRow(server, id))?.status, 'reported');
  });

  it('queues a reboot task that starts from the original analysis', async () => {
    const id = await addTask(server, {
      target: sample.target,
      sample_id: sample.id,
      status: 'reported',
      package: 'generic',
      platform: 'linux',
      owner: 'alice',
      options: 'a=1',
      machine: 'linux1',
      tags: '["x"]',
      timeout: 30,
      priority: 3,
    });
    const { status, body } = await server.json(`/tasks/reboot/${id}`);
    assert.equal(status, 200);
    assert.deepEqual(Object.keys(body), ['reboot_id', 'task_id']);
    assert.equal(body.task_id, id);
    const reboot = await taskRow(server, body.reboot_id);
    assert.deepEqual(
      [reboot?.status, reboot?.category, reboot?.target, reboot?.reboot_of, reboot?.custom, reboot?.package, reboot?.platform],
      ['pending', 'file', sample.target, id, String(id), 'generic', 'linux'],
    );
    assert.deepEqual([reboot?.timeout, reboot?.priority, reboot?.options, reboot?.machine, reboot?.tags], [0, 1, '', '', '[]']);
    assert.equal(reboot?.sample_id, sample.id);
  });

  it('reboots a file unpacked from an archive as a file task, as Cuckoo makes every reboot', async () => {
    const id = await addTask(server, { target: sample.target, sample_id: sample.id, status: 'reported', category: 'archive', archive_id: sample.id, archive_name: 'a.zip', archive_member: 'x.sh' });
    const { status, body } = await server.json(`/tasks/reboot/${id}`);
    assert.equal(status, 200);
    const reboot = (await taskRow(server, body.reboot_id))!;
    assert.deepEqual([reboot.category, reboot.target, reboot.sample_id, reboot.reboot_of], ['file', sample.target, sample.id, id]);
  });

  it('answers 404 "Error creating reboot task" for a missing task, a URL task or a missing sample file', async () => {
    const url = await addTask(server, { category: 'url', target: 'http://example.test/', status: 'reported' });
    const gone = await addTask(server, { target: join(server.home, 'tmp', 'gone.bin'), status: 'reported' });
    for (const id of [9999, url, gone]) {
      await assertAnswer(server, `/tasks/reboot/${id}`, 404, { message: 'Error creating reboot task' });
    }
  });

  it('changes nothing on HEAD to reschedule, rereport or reboot, and answers 404 for a missing task', async () => {
    const id = await addTask(server, { target: sample.target, sample_id: sample.id, status: 'reported' });
    const count = async () => (await server.ctx.stores.tasks.list()).length;
    const before = await count();
    for (const path of [`/tasks/reschedule/${id}`, `/tasks/reschedule/${id}/2`, `/tasks/rereport/${id}`, `/tasks/reboot/${id}`]) {
      const response = await server.fetch(path, { method: 'HEAD' });
      assert.equal(response.status, 200, path);
      assert.equal(await response.text(), '');
      assert.equal((await server.fetch(path.replace(String(id), '9999'), { method: 'HEAD' })).status, 404);
    }
    assert.equal(await count(), before);
    assert.equal((await taskRow(server, id))?.status, 'reported');
  });

  it('refuses to reboot a task whose analysis has not ended, and has no /v1 alias', async () => {
    const id = await addTask(server, { target: sample.target, status: 'running' });
    await assertAnswer(server, `/tasks/reboot/${id}`, 409, { message: `Task ${id} is still running; only a task whose analysis has ended can be rebooted` });
    const done = await addTask(server, { target: sample.target, status: 'reported' });
    assert.equal((await server.fetch(`/v1/tasks/reboot/${done}`)).status, 404);
  });
});
