import assert from 'node:assert/strict';
import { type ChildProcessWithoutNullStreams, execFileSync, spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import { after, describe, it } from 'node:test';

const cli = join(dirname(fileURLToPath(import.meta.url)), '..', '..', 'src', 'cli', 'main.js');

const MACHINES_RUN = '/run/nestbox/machines';
const NETWORKS_RUN = '/run/nestbox/net';

/** Ids of the machines and task networks an owner process recorded as its own. */
function ownedBy(pid: number): { machines: string[]; networks: string[] } {
  const ownerPid = (file: string) => {
    try {
      return (JSON.parse(readFileSync(file, 'utf8')) as { pid: number }).pid;
    } catch {
      return undefined;
    }
  };
  const list = (dir: string) => (existsSync(dir) ? readdirSync(dir) : []);
  return {
    machines: list(MACHINES_RUN).filter((id) => ownerPid(join(MACHINES_RUN, id, 'owner.json')) === pid),
    networks: list(NETWORKS_RUN)
      .filter((file) => file.endsWith('.json') && ownerPid(join(NETWORKS_RUN, file)) === pid)
      .map((file) => file.slice(0, -'.json'.length)),
  };
}

/** What is still on the host of the given machines and networks: records, namespaces, mounts, processes. */
function remainsOf(ids: { machines: string[]; networks: string[] }): string[] {
  const netns = execFileSync('ip', ['netns', 'list'], { encoding: 'utf8' }).split('\n').map((line) => line.split(' ')[0]!);
  const mounts = readFileSync('/proc/self/mountinfo', 'utf8').split('\n');
  const processes = execFileSync('ps', ['-eo', 'pid=,args='], { encoding: 'utf8' }).split('\n').filter((line) => !/ps -eo/.test(line));
  const remains: string[] = [];
  for (const id of ids.machines) {
    if (existsSync(join(MACHINES_RUN, id))) remains.push(`run folder of machine ${id}`);
    remains.push(...mounts.filter((line) => line.includes(join(MACHINES_RUN, id))).map((line) => `mount ${line}`));
    remains.push(...processes.filter((line) => line.includes(id)).map((line) => `process ${line}`));
  }
  for (const id of ids.networks) {
    if (existsSync(join(NETWORKS_RUN, `${id}.json`))) remains.push(`owner record of network ${id}`);
    remains.push(...netns.filter((name) => name === `nestbox-net-${id}` || name === `nestbox-net-${id}-gw`).map((name) => `netns ${name}`));
    remains.push(...processes.filter((line) => line.includes(`nestbox-net-${id}`)).map((line) => `process ${line}`));
  }
  return remains;
}

async function startService(home: string): Promise<{ child: ChildProcessWithoutNullStreams; url: string }> {
  const child = spawn(process.execPath, [cli, '--home', home, 'start', '--host', '127.0.0.1', '--port', '0'], {
    env: { ...process.env, NESTBOX_API_TOKEN: '', NESTBOX_LOGGING_LEVEL: 'warn' },
  });
  let output = '';
  const url = await new Promise<string>((resolve, reject) => {
    child.stdout.on('data', (chunk: Buffer) => {
      output += chunk.toString();
      const match = /listening on (http:\/\/\S+)/.exec(output);
      if (match) resolve(match[1]!);
    });
    child.on('exit', (code) => reject(new Error(`service exited with ${code}: ${output}`)));
  });
  return { child, url };
}

async function taskOf(url: string, id: number) {
  const response = await fetch(`${url}/tasks/view/${id}`);
  return ((await response.json()) as { task: { status: string; errors: string[] } }).task;
}

async function waitFor<T>(what: string, probe: () => Promise<T | undefined>, timeoutMs: number): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(300);
  }
}

describe('crash recovery', { timeout: 600_000 }, () => {
  const home = mkdtempSync(join(tmpdir(), 'nestbox-crash-'));
  let service: ChildProcessWithoutNullStreams | undefined;
  after(() => {
    service?.kill('SIGTERM');
    rmSync(home, { recursive: true, force: true });
  });

  it('finishes a task whose service was killed with SIGKILL mid-analysis, and leaves nothing behind', async () => {
    let { child, url } = await startService(home);
    service = child;
    const body = new FormData();
    body.append('file', new Blob(['#!/bin/sh\necho started > /tmp/started\nsleep 6\necho done > /tmp/done\n']), 'slow.sh');
    body.append('timeout', '60');
    const { task_id: id } = (await (await fetch(`${url}/tasks/create/file`, { method: 'POST', body })).json()) as { task_id: number };
    await waitFor('the analysis to run', async () => ((await taskOf(url, id)).status === 'running' ? true : undefined), 240_000);
    // A task is running before its machine and network exist; on a loaded host that takes seconds.
    // Only what this service owns counts: other tests may run machines meanwhile.
    const killedPid = child.pid!;
    await waitFor('the machine and network of the analysis', async () => {
      const owned = ownedBy(killedPid);
      return owned.machines.length > 0 && owned.networks.length > 0 ? owned : undefined;
    }, 120_000);
    child.kill('SIGKILL');
    await new Promise((resolve) => child.once('exit', resolve));
    const orphaned = ownedBy(killedPid);
    assert.ok(orphaned.machines.length > 0 && orphaned.networks.length > 0, 'the killed analysis left a machine and a network');
    assert.ok(remainsOf(orphaned).length > 0, 'there was something to clean up');

    ({ child, url } = await startService(home));
    service = child;
    const task = await waitFor(
      'the task to end',
      async () => {
        const current = await taskOf(url, id);
        return ['reported', 'failed_analysis', 'failed_processing'].includes(current.status) ? current : undefined;
      },
      300_000,
    );
    assert.equal(task.status, 'reported', task.errors.join('; '));
    assert.ok(task.errors.some((error) => /interrupted by a restart/.test(error)), task.errors.join('; '));

    child.kill('SIGTERM');
    await new Promise((resolve) => child.once('exit', resolve));
    service = undefined;
    assert.deepEqual(remainsOf(orphaned), []);
  });
});
