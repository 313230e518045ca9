import assert from 'node:assert/strict';
import { type ChildProcessWithoutNullStreams, execFile, spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { after, before, describe, it } from 'node:test';
import { openDatabase } from '../../src/db/connect.js';
import { machineOf, secondsAgo as ago } from '../helpers/cluster-rows.js';
import { taskRow } from '../helpers/tasks.js';

const run = promisify(execFile);
const cli = join(dirname(fileURLToPath(import.meta.url)), '..', '..', 'src', 'cli', 'main.js');

/** The `nestbox` command as a user runs it: a real service process and client commands against it. */
describe('nestbox CLI', () => {
  let home: string;
  let service: ChildProcessWithoutNullStreams;
  let firstOutput = '';
  let errorOutput = '';
  let url = '';

  before(async () => {
    home = mkdtempSync(join(tmpdir(), 'nestbox-cli-'));
    service = spawn(process.execPath, [cli, '--home', home, 'start', '--host', '127.0.0.1', '--port', '0'], {
      env: { ...process.env, NESTBOX_LOGGING_LEVEL: 'warn', NESTBOX_MACHINES: '[]', NESTBOX_CLUSTER_NODE_NAME: 'cli-main' },
    });
    service.stderr.on('data', (chunk: Buffer) => (errorOutput += chunk.toString()));
    url = await new Promise<string>((resolve, reject) => {
      service.stdout.on('data', (chunk: Buffer) => {
        firstOutput += chunk.toString();
        const match = /listening on (http:\/\/\S+)/.exec(firstOutput);
        if (match) resolve(match[1]!);
      });
      service.on('exit', (code) => reject(new Error(`service exited with ${code}: ${firstOutput}`)));
    });
  });
  after(() => {
    service.kill('SIGTERM');
    rmSync(home, { recursive: true, force: true });
  });

  it('creates the configuration on first start and prints the new token once', () => {
    assert.match(firstOutput, /Created .*config\.yaml/);
    assert.match(firstOutput, /API token[^\n]*\n\s+[A-Za-z0-9_-]{22}\n/);
  });

  it('shows the status through the API with the configured token, as /cuckoo/status with --json', async () => {
    const { stdout } = await run(process.execPath, [cli, '--home', home, '--url', url, 'status', '--json']);
    const status = JSON.parse(stdout);
    assert.equal(typeof status.tasks.total, 'number');
    assert.equal(status.machines.total, 0);
    assert.equal(status.nodes['cli-main'].role, 'all');
  });

  it('fails clearly with a wrong token', async () => {
    await assert.rejects(run(process.execPath, [cli, '--url', url, '--token', 'wrong', 'status']), (error: { stderr: string }) =>
      /HTTP 401/.test(error.stderr),
    );
  });

  it('lists tasks (none yet)', async () => {
    const { stdout } = await run(process.execPath, [cli, '--home', home, '--url', url, 'list']);
    assert.equal(stdout, '');
  });

  it("lists the cluster's nodes with their role, state, heartbeat age, machines and running tasks", async () => {
    // Two other nodes of the same database, written there as their registry would.
    const written = Date.now();
    const database = await openDatabase('', home);
    await database.db.insertInto('nodes').values([
      { name: 'worker-b', role: 'worker', heartbeat_on: ago(4.5), lease_expires_on: ago(-25) },
      { name: 'worker-gone', role: 'worker', heartbeat_on: ago(600.5), lease_expires_on: ago(570) },
    ]).execute();
    await database.db.insertInto('machines').values([machineOf('worker-b', 'b1', true), machineOf('worker-b', 'b2')]).execute();
    await database.db.insertInto('tasks').values(taskRow({ status: 'running', node: 'worker-b' })).execute();
    await database.close();

    const { stdout } = await run(process.execPath, [cli, '--home', home, '--url', url, 'status']);
    const lines = stdout.split('\n');
    assert.match(lines[1]!, /^tasks: pending 0, running 1, completed 0, reported 0 \(total 1\)$/);
    assert.match(lines[2]!, /^machines: 1 free of 2 \(live nodes\)$/);
    const table = lines.slice(lines.indexOf('') + 1).filter(Boolean).map((line) => line.split(/\s{2,}/));
    assert.deepEqual(table[0], ['NODE', 'ROLE', 'STATE', 'HEARTBEAT', 'MACHINES', 'RUNNING']);
    assert.deepEqual(table.slice(1).map((row) => row[0]), ['cli-main', 'worker-b', 'worker-gone']);
    assert.deepEqual(table[1]!.slice(0, 3), ['cli-main', 'all', 'live']);
    assert.deepEqual(table[2], ['worker-b', 'worker', 'live', table[2]![3], '1/2 free', '1']);
    // 4.5 s old when written, plus however long the command took to start on a busy machine.
    const age = Number(/^(\d+)s ago$/.exec(table[2]![3]!)?.[1]);
    assert.ok(age >= 4 && age <= 5 + (Date.now() - written) / 1000, `heartbeat ${table[2]![3]}`);
    assert.deepEqual(table[3], ['worker-gone', 'worker', 'down', '10m ago', '0/0 free', '0']);
  });

  it('stops on SIGTERM, having printed no warning of Node or of a library (deprecations) while it ran', async () => {
    // Checked once the process has ended, so that nothing it wrote to stderr can still be on its way.
    const ended = new Promise((resolve) => service.once('exit', resolve));
    service.kill('SIGTERM');
    await ended;
    assert.doesNotMatch(errorOutput, /warning|deprecat/i, errorOutput);
  });

  it('says so when the service cannot be reached', async () => {
    await assert.rejects(run(process.execPath, [cli, '--url', 'http://127.0.0.1:9', '--token', '', 'status']), (error: { stderr: string }) =>
      /cannot reach nestbox/.test(error.stderr),
    );
  });
});
