import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { fixtureSource } from '../fixtures/tracer-harness.js';
import { compileSample, supervisedEvasions } from '../helpers/evasion-samples.js';
import { analyseSample } from '../helpers/sample-through-api.js';
import { startTestServer, type TestServer } from '../helpers/server.js';

/**
 * Issue 10's evasions end to end through the API on the linux machine, against the sample supervisor:
 * sleeping past the timeout, fileless execution, a self-copy that hides and deletes itself, a debugger
 * check, and a process too short-lived for the end-of-run memory dumps. The qemu machine runs the same
 * cases (e2e-qemu-supervisor.test.ts).
 */
const built = mkdtempSync(join(tmpdir(), 'nestbox-supervisor-e2e-'));
const compile = (name: string) => compileSample(name, built);

/** A 32-bit program with no libc, calling the kernel with int 0x80. */
function compile32(name: string): Buffer {
  const out = join(built, name);
  execFileSync('gcc', ['-m32', '-nostdlib', '-static', '-fno-pie', '-no-pie', '-O1', '-o', out, fixtureSource(`${name}.c`)]);
  return readFileSync(out);
}

const dropped = (report: any): Array<{ filepath: string; path: string | null }> => report.dropped ?? [];

describe('end to end on the Linux machine: what the supervisor defeats', { timeout: 900_000 }, () => {
  let server: TestServer;
  before(async () => {
    server = await startTestServer({ machines: [{ name: 'linux1', settings: { screenshots: false } }] }, { engine: true, pollMs: 200 });
  });
  after(() => server.close());

  const analyse = (name: string, content: string | Uint8Array, fields: Record<string, string> = {}) => analyseSample(server, name, content, fields);
  for (const [title, test] of supervisedEvasions(analyse, compile)) it(title, test);

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
    // The calls the supervisor answered never reached the tracer: they are listed among the process's
    // calls from its record, in time order (before the file the sample writes once its waits are over).
    const sample = report.behavior.processes.find((process: any) => process.calls.some((call: any) => call.arguments.shortened === true));
    assert.ok(sample, 'a process lists the answered calls');
    const answered = sample.calls.filter((call: any) => call.arguments.shortened === true);
    assert.deepEqual(answered.map((call: any) => [call.api, call.arguments.seconds, call.category, call.return_value]), [
      ['timerfd_settime', 270, 'synchronisation', 0],
      ['pselect6', 270, 'synchronisation', 0], ['pselect6', 270, 'synchronisation', 0], ['pselect6', 270, 'synchronisation', 0],
      ['poll', 270, 'synchronisation', 0], ['poll', 270, 'synchronisation', 0], ['ppoll', 270, 'synchronisation', 0],
      ['epoll_wait', 270, 'synchronisation', 0], ['epoll_pwait', 270, 'synchronisation', 0], ['epoll_pwait2', 270, 'synchronisation', 0],
    ]);
    const written = sample.calls.findIndex((call: any) => call.arguments.path === '/tmp/after-time-evasions');
    assert.ok(written > sample.calls.indexOf(answered.at(-1)), `the last answered call comes before the file is written (at ${written})`);
    for (const call of answered) assert.equal(report.behavior.apistats[String(sample.pid)][call.api] >= 1, true, call.api);
    // Real short ones ran as asked: a 0.3 s itimer and poll, a 60 s poll on a pipe a child wrote to after 1 s.
    const noted = dropped(report).find((file) => file.filepath === '/tmp/time-evasions.txt');
    assert.ok(noted?.path, 'the sample noted its waits');
    const lines = new Map(readFileSync(noted!.path!, 'utf8').trim().split('\n').map((line) => {
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
    // The sleeps the supervisor answered never ran (seccomp comes before the tracepoint): they are counted
    // from its record, under the name it gives them (clock_nanosleep_time64 as clock_nanosleep).
    assert.deepEqual(stats, { execve: 1, getppid: 1000, open: 1, write: 1, close: 1, exit_group: 1, nanosleep: 1, clock_nanosleep: 1 });
  });
});
