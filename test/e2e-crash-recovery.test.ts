import assert from 'node:assert/strict';
import { type ChildProcessWithoutNullStreams, execFileSync, spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import { after, describe, it } from 'node:test';

const cli = join(dirname(fileURLToPath(import.meta.url)), '..', 'src', 'cli', 'main.js');

/** What nestbox's machines leave on the host while they run: namespaces, mounts, helper processes. */
function leftovers() {
  const netns = execFileSync('ip', ['netns', 'list'], { encoding: 'utf8' })
    .split('\n')
    .filter((line) => line.startsWith('nestbox'));
  const mounts = readFileSync('/proc/self/mountinfo', 'utf8')
    .split('\n')
    .filter((line) => /nestbox/.test(line) && !/\/var\/lib\/nestbox/.test(line.split(' ')[4] ?? ''));
  const processes = execFileSync('ps', ['-eo', 'pid=,args='], { encoding: 'utf8' })
    .split('\n')
    .filter((line) => /nestbox-(machine|net)|fake-services|bpftrace/.test(line) && !/ps -eo/.test(line));
  return { netns, mounts, processes };
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
    await sleep(2000);
    child.kill('SIGKILL');
    await new Promise((resolve) => child.once('exit', resolve));
    // What the killed service left running; other tests may come and go meanwhile, so only these count.
    const orphaned = leftovers();
    assert.ok(orphaned.netns.length > 0 || orphaned.processes.length > 0, 'the killed analysis had resources to clean up');

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
    const after = leftovers();
    const survivors = (key: keyof typeof after) => orphaned[key].filter((item) => after[key].includes(item));
    assert.deepEqual(survivors('netns'), []);
    assert.deepEqual(survivors('mounts'), []);
    assert.deepEqual(survivors('processes'), []);
  });
});
