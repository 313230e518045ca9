import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdtempSync, readdirSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { after, before, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { form, startTestServer, type TestServer } from '../helpers/server.js';

/**
 * Issue 10's evasions end to end through the API on the linux machine, against the sample supervisor:
 * sleeping past the timeout, fileless execution, a self-copy that hides and deletes itself, a debugger
 * check, and a process too short-lived for the end-of-run memory dumps.
 */
const FIXTURES = fileURLToPath(new URL('../../../test/fixtures/', import.meta.url));
const built = mkdtempSync(join(tmpdir(), 'nestbox-supervisor-e2e-'));

function compile(name: string): Buffer {
  const out = join(built, name);
  execFileSync('gcc', ['-O1', '-static', '-o', out, join(FIXTURES, `${name}.c`)]);
  return readFileSync(out);
}

const sha256 = (content: Uint8Array) => createHash('sha256').update(content).digest('hex');

/** A 32-bit program with no libc, calling the kernel with int 0x80. */
function compile32(name: string): Buffer {
  const out = join(built, name);
  execFileSync('gcc', ['-m32', '-nostdlib', '-static', '-fno-pie', '-no-pie', '-O1', '-o', out, join(FIXTURES, `${name}.c`)]);
  return readFileSync(out);
}

interface DroppedView {
  filepath: string;
  sha256: string;
  path: string | null;
}

describe('end to end on the Linux machine: what the supervisor defeats', { timeout: 900_000 }, () => {
  let server: TestServer;
  before(async () => {
    server = await startTestServer({ machines: [{ name: 'linux1', settings: { screenshots: false } }] }, { engine: true, pollMs: 200 });
  });
  after(() => server.close());

  /** Submits a sample and returns its report once it is reported. */
  async function analyse(name: string, content: string | Uint8Array, fields: Record<string, string> = {}): Promise<any> {
    const { status, body } = await server.json<{ task_id: number }>('/tasks/create/file', {
      method: 'POST',
      body: form({ timeout: '30', ...fields }, [['file', name, content]]),
    });
    assert.equal(status, 200, JSON.stringify(body));
    const deadline = Date.now() + 240_000;
    for (;;) {
      const { body: view } = await server.json<{ task: { status: string; errors: string[] } }>(`/tasks/view/${body.task_id}`);
      if (view.task.status === 'reported') break;
      assert.ok(!view.task.status.startsWith('failed'), `task ${body.task_id}: ${view.task.status} ${view.task.errors.join('; ')}`);
      assert.ok(Date.now() < deadline, `task ${body.task_id} still ${view.task.status}`);
      await sleep(500);
    }
    const { body: report } = await server.json<any>(`/tasks/report/${body.task_id}`);
    return { ...report, taskDir: join(server.ctx.layout.analyses, String(body.task_id)) };
  }

  const dropped = (report: any): DroppedView[] => report.dropped ?? [];

  it('reports what a sample does after sleeping three times the timeout, and the sleep it skipped', async () => {
    const report = await analyse('sleeper.sh', readFileSync(join(FIXTURES, 'supervisor-sleeper.sh')), { timeout: '30' });
    assert.ok(report.behavior.summary.file_created.includes('/tmp/after-sleep.txt'), JSON.stringify(report.behavior.summary.file_created));
    assert.ok(dropped(report).some((file) => file.filepath === '/tmp/after-sleep.txt'));
    assert.ok(report.network.dns.some((query: { request: string }) => query.request === 'after-sleep.example'), JSON.stringify(report.network.dns));
    assert.deepEqual(
      report.debug.skipped_sleeps.map((skipped: { call: string; seconds: number }) => [skipped.call, skipped.seconds]),
      [['clock_nanosleep', 90]],
    );
    assert.ok(report.debug.log.some((line: string) => /asked to sleep 90 s \(clock_nanosleep\): the sleep returned at once/.test(line)));
  });

  it('reports what a sample does after timers and waits of three times the timeout, and the ones it shortened', async () => {
    // The default threshold (10 s): each wait on a pipe nobody writes to ends after 10 s, the run in about 50 s.
    const report = await analyse('timers', compile('supervisor-time-evasions'), { timeout: '90', options: 'arguments=270' });
    assert.ok(dropped(report).some((file) => file.filepath === '/tmp/after-time-evasions'), JSON.stringify(dropped(report).map((file) => file.filepath)));
    assert.ok(report.behavior.summary.file_created.includes('/tmp/after-time-evasions'), JSON.stringify(report.behavior.summary.file_created));
    const shortened = report.debug.skipped_sleeps.map((skipped: { call: string; seconds: number }) => [skipped.call, skipped.seconds]);
    assert.deepEqual(shortened, [
      ['alarm', 270], ['setitimer', 270], ['timer_settime', 270], ['timerfd_settime', 270],
      ['pselect6', 270], ['pselect6', 270], ['pselect6', 270], ['poll', 270], ['poll', 270], ['ppoll', 270],
      ['epoll_wait', 270], ['epoll_pwait', 270], ['epoll_pwait2', 270],
    ]);
    assert.ok(report.debug.log.some((line: string) => /set a timer of 270 s \(timerfd_settime\): it fired early/.test(line)));
    // Real short ones ran as asked: a 0.3 s itimer and poll, a 60 s poll on a pipe a child wrote to after 1 s.
    const noted = dropped(report).find((file) => file.filepath === '/tmp/time-evasions.txt');
    assert.ok(noted?.path, 'the sample noted its waits');
    const lines = new Map(readFileSync(noted.path, 'utf8').trim().split('\n').map((line) => {
      const [name, waited, result] = line.split(' ');
      return [name!, [Number(waited), Number(result)]] as const;
    }));
    assert.ok(lines.get('short-setitimer')![0] >= 0.29 && lines.get('short-setitimer')![0] < 1, JSON.stringify([...lines]));
    assert.ok(lines.get('short-poll')![0] >= 0.29 && lines.get('short-poll')![0] < 1, JSON.stringify([...lines]));
    assert.deepEqual([lines.get('ready-poll')![0] >= 0.9 && lines.get('ready-poll')![0] < 5, lines.get('ready-poll')![1]], [true, 11]);
  });

  it('reports what a 32-bit (int 0x80) program does after sleeping three times the timeout, and counts its calls exactly', async () => {
    const report = await analyse('sleep32', compile32('supervisor-sleep32'));
    assert.ok(dropped(report).some((file) => file.filepath === '/tmp/after-sleep32'), JSON.stringify(dropped(report).map((file) => file.filepath)));
    assert.deepEqual(
      report.debug.skipped_sleeps.map((skipped: { call: string; seconds: number }) => [skipped.call, skipped.seconds]),
      [['nanosleep', 180], ['clock_nanosleep', 180]],
    );
    const sample = report.behavior.processes.find((process: { command_line: string }) => process.command_line.includes('sleep32'));
    assert.ok(sample, JSON.stringify(report.behavior.processes.map((process: { command_line: string }) => process.command_line)));
    const stats = report.behavior.apistats[String(sample.pid)];
    // Under their i386 names (numbers 64, 5, 4, 6, 252: on x86_64 they would be fstat, write, close...).
    // The sleeps are not counted: the supervisor answered them, so they never ran (seccomp comes before the tracepoint).
    assert.deepEqual(stats, { getppid: 1000, open: 1, write: 1, close: 1, exit_group: 1 });
  });

  it('lists an ELF run from a memfd in dropped, with the name the process saw', async () => {
    const sample = compile('supervisor-memfd-self');
    const report = await analyse('fileless', sample);
    assert.ok(dropped(report).some((file) => file.filepath === '/tmp/ran-from-memory'), 'the copy in memory ran');
    const fromMemory = dropped(report).find((file) => file.filepath.startsWith('/memfd:payload'));
    assert.ok(fromMemory, JSON.stringify(dropped(report).map((file) => file.filepath)));
    assert.equal(fromMemory.sha256, sha256(sample));
  });

  it('lists a self-copy that renamed itself, ran and deleted its own file, at the path it ran from', async () => {
    const sample = compile('supervisor-self-copy');
    const report = await analyse('updater', sample);
    assert.ok(dropped(report).some((file) => file.filepath === '/tmp/self-copy-ran'), 'the hidden copy ran');
    const hidden = dropped(report).filter((file) => file.filepath === '/tmp/.cache-update');
    assert.equal(hidden.length, 1, JSON.stringify(dropped(report).map((file) => file.filepath)));
    assert.equal(hidden[0]!.sha256, sha256(sample));
  });

  it('lets PTRACE_TRACEME succeed: nothing ptraces the sample', async () => {
    const report = await analyse('antidebug', compile('tracer-ptrace-check'), { options: 'arguments=/tmp/not-debugged' });
    assert.ok(dropped(report).some((file) => file.filepath === '/tmp/not-debugged'), 'the sample believed nobody watched');
  });

  it('dumps a short-lived child process as it exits, with memory=1', async () => {
    const report = await analyse('short-lived', compile('supervisor-short-child'), { memory: '1' });
    const memoryDir = join(report.taskDir, 'memory');
    const dumps = readdirSync(memoryDir).filter((name) => name.endsWith('.dmp'));
    assert.ok(dumps.length >= 2, `parent and child dumped: ${dumps.join(',')}`);
    const withMarker = dumps.filter((name) => readFileSync(join(memoryDir, name)).includes('short-lived-24690'));
    assert.equal(withMarker.length, 1, 'only the child built the marker, and its dump holds it');
  });
});
